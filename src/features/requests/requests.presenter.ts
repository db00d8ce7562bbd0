import type { Selectable } from "kysely";
import type { Config } from "../../config/config.js";
import type { MediaTable, RequestsTable } from "../../db/schema.js";
import { type ContactView, presentContactWithMethods } from "../contacts/contacts.presenter.js";
import type { ContactWithMethods } from "../contacts/contacts.repository.js";
import { presentRequester, type RequesterView } from "../requesters/requesters.presenter.js";
import type { RequesterRow } from "../requesters/requesters.repository.js";

/** A request row. */
export type RequestRow = Selectable<RequestsTable>;
/** A media row. */
export type MediaRow = Selectable<MediaTable>;

/** What a request is presented with besides its own row. */
export interface RequestRelated {
  /** The request's contacts in their request order, each with its methods. */
  contacts: ContactWithMethods[];
  /** The named requester, or null (the recipient page then shows the owner's profile). */
  requester: RequesterRow | null;
  /** The request's media (any state); when given, the view carries `media`. */
  media?: MediaRow[];
  /** The owner's display name, used in a generated email subject. */
  ownerName?: string;
}

/** Media inside a request (spec: Media plus `file` and the fields of CLIENTS.md item 17). */
export interface MediaSummaryView {
  id: number;
  request: number;
  name: string;
  content_type: string;
  bytes: number;
  extension: string;
  file: string;
  total_chunks: number;
  current_chunk: number;
  file_checksum: string | null;
  sha256: string | null;
  state: string;
  times_downloaded: number;
  max_allowed_times_downloaded: number | null;
  removed_at: string | null;
  created: string;
  updated: string;
}

/** The API Request object (spec: Request, plus CLIENTS.md item 18 and Ferry's pull-request limits). */
export interface RequestView {
  id: number;
  identifier: string;
  type: "push" | "pull";
  message: string;
  requester_privatenotes: string;
  is_draft: boolean;
  complete: boolean;
  is_expired: boolean;
  expires_at: string | null;
  receiver_message: string | null;
  short_message: string;
  long_message_subject: string;
  long_message: string;
  contact: ContactView[];
  media?: MediaSummaryView[];
  callback_url: string | null;
  requester: RequesterView | null;
  email_template_slug: string | null;
  tfa_send_to: "email" | "sms" | null;
  tfa_send_to_value: string | null;
  tfa_times_sent: number;
  callback_status: string | null;
  callback_tries: number;
  allowed_extensions: string[] | null;
  max_file_bytes: number | null;
  created: string;
  updated: string;
}

/** The recipient page of a request: `{publicBaseUrl}/r/<identifier>/`. */
export function recipientUrl(config: Pick<Config, "publicBaseUrl">, identifier: string): string {
  return `${config.publicBaseUrl}/r/${identifier}/`;
}

function escapeAttribute(value: string): string {
  return value
    .replaceAll("&", "&amp;")
    .replaceAll('"', "&quot;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;");
}

/**
 * The email subject used when the owner gave none: names the requester, else the owner, else
 * nobody, and says whether files are sent (push) or asked for (pull).
 */
export function generatedSubject(type: "push" | "pull", senderName: string): string {
  const who = senderName.trim();
  if (type === "push") return who ? `${who} has sent you files` : "You have received files";
  return who ? `${who} has requested files from you` : "You have been asked to upload files";
}

/** Allow-lists a media row as it appears inside a request. */
export function presentMediaSummary(
  row: MediaRow,
  _config?: Pick<Config, "publicBaseUrl">,
): MediaSummaryView {
  return {
    id: row.id,
    request: row.request_id,
    name: row.name,
    content_type: row.content_type,
    bytes: Number(row.bytes),
    extension: row.extension,
    file: row.file,
    total_chunks: row.total_chunks,
    current_chunk: row.received_chunks,
    file_checksum: row.md5,
    sha256: row.sha256,
    state: row.state,
    times_downloaded: row.times_downloaded,
    max_allowed_times_downloaded: row.max_allowed_times_downloaded,
    removed_at: row.removed_at,
    created: row.created,
    updated: row.updated,
  };
}

/**
 * Builds the API Request object. `short_message` gets the recipient URL appended after a space,
 * `long_message` an HTML anchor to it (after a line break), and `long_message_subject` is
 * generated when empty. `media` is present exactly when `related.media` is given.
 */
export function presentRequest(
  row: RequestRow,
  related: RequestRelated,
  config: Pick<Config, "publicBaseUrl">,
): RequestView {
  const url = recipientUrl(config, row.identifier);
  const anchor = `<a href="${escapeAttribute(url)}">${escapeAttribute(url)}</a>`;
  const requesterName = related.requester
    ? `${related.requester.first_name} ${related.requester.last_name}`.trim()
    : "";
  const view: RequestView = {
    id: row.id,
    identifier: row.identifier,
    type: row.type,
    message: row.message,
    requester_privatenotes: row.requester_privatenotes,
    is_draft: row.is_draft === 1,
    complete: row.complete === 1,
    is_expired: row.is_expired === 1,
    expires_at: row.expires_at,
    receiver_message: row.receiver_message,
    short_message: row.short_message ? `${row.short_message} ${url}` : url,
    long_message_subject:
      row.long_message_subject || generatedSubject(row.type, requesterName || related.ownerName || ""),
    long_message: row.long_message ? `${row.long_message}<br>\n${anchor}` : anchor,
    contact: related.contacts.map(presentContactWithMethods),
    callback_url: row.callback_url,
    requester: related.requester ? presentRequester(related.requester) : null,
    email_template_slug: row.email_template_slug,
    tfa_send_to: row.tfa_send_to,
    tfa_send_to_value: row.tfa_send_to_value,
    tfa_times_sent: row.tfa_times_sent,
    callback_status: row.callback_status,
    callback_tries: row.callback_tries,
    allowed_extensions: row.allowed_extensions ? row.allowed_extensions.split(",") : null,
    max_file_bytes: row.max_file_bytes === null ? null : Number(row.max_file_bytes),
    created: row.created,
    updated: row.updated,
  };
  if (related.media) view.media = related.media.map((m) => presentMediaSummary(m, config));
  return view;
}

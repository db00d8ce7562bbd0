import type { CallbackDeliveryStatus } from "../../db/schema.js";
import { type ContactView, type ContactWithMethods, presentContactWithMethods } from "../contacts/index.js";
import { type MediaInRequestView, type MediaRow, presentMediaInRequest } from "../media/index.js";
import { presentRequester, type RequesterRow, type RequesterView } from "../requesters/index.js";
import { generatedSubject } from "../templates/index.js";
import type { RequestRow } from "./requests.repository.js";

export type { RequestRow };

/** What a request is presented with besides its own row. */
export interface RequestRelated {
  /** The request's contacts in their request order, each with its methods. */
  contacts: ContactWithMethods[];
  /** The named requester, or null (the recipient page then shows the owner's profile). */
  requester: RequesterRow | null;
  /** The request's media (any state). */
  media: MediaRow[];
  /** The owner's display name, used in a generated email subject. */
  ownerName?: string;
  /** The request's recipient page (BrandingService.recipientUrl: the account's custom host, if any). */
  recipientUrl: string;
}

/** The API Request object (spec: Request, plus the fields existing clients read and Ferry's pull-request limits). */
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
  media: MediaInRequestView[];
  callback_url: string | null;
  requester: RequesterView | null;
  email_template_slug: string | null;
  tfa_send_to: "email" | "sms" | null;
  tfa_send_to_value: string | null;
  tfa_times_sent: number;
  callback_status: CallbackDeliveryStatus | null;
  callback_tries: number;
  allowed_extensions: string[] | null;
  max_file_bytes: number | null;
  created: string;
  updated: string;
}

function escapeAttribute(value: string): string {
  return value
    .replaceAll("&", "&amp;")
    .replaceAll('"', "&quot;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;");
}

/**
 * Builds the API Request object. `short_message` gets `related.recipientUrl` appended after a space,
 * `long_message` an HTML anchor to it (after a line break), and `long_message_subject` is
 * generated when empty.
 */
export function presentRequest(row: RequestRow, related: RequestRelated): RequestView {
  const url = related.recipientUrl;
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
    media: related.media.map(presentMediaInRequest),
    callback_url: row.callback_url,
    requester: related.requester ? presentRequester(related.requester) : null,
    email_template_slug: row.email_template_slug,
    tfa_send_to: row.tfa_send_to,
    tfa_send_to_value: row.tfa_send_to_value,
    tfa_times_sent: row.tfa_times_sent,
    callback_status: row.callback_status as CallbackDeliveryStatus | null,
    callback_tries: row.callback_tries,
    allowed_extensions: row.allowed_extensions ? row.allowed_extensions.split(",") : null,
    max_file_bytes: row.max_file_bytes === null ? null : Number(row.max_file_bytes),
    created: row.created,
    updated: row.updated,
  };
  return view;
}

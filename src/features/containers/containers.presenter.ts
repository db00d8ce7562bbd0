import type { ContainerState } from "../../db/schema.js";
import type { RequestRow } from "../requests/index.js";
import type { FeatureRow, MediaTagRow } from "./container-features.repository.js";
import type {
  ContainerEmailRow,
  ContainerRow,
  MessageRow,
  RecipientItemRow,
  RecipientRow,
  ReplyRow,
} from "./containers.repository.js";

/** The Container object. */
export interface ContainerView {
  id: number;
  identifier: string;
  page_type: "pushpull" | "p2";
  display_chat: boolean;
  callback_url: string | null;
  requester: number | null;
  state: ContainerState;
  auth_code: { send_as: "email" | "sms"; to: string } | null;
  sent_at: string | null;
  completed_at: string | null;
  chat_closed_at: string | null;
  created: string;
  updated: string;
}

/** Allow-lists a container (its own row and its shared row). */
export function presentContainer(row: ContainerRow, shared: RequestRow): ContainerView {
  return {
    id: row.id,
    identifier: shared.identifier,
    page_type: row.page_type,
    display_chat: row.display_chat === 1,
    callback_url: shared.callback_url,
    requester: shared.requester_id,
    state: row.state,
    auth_code: row.auth_send_as && row.auth_to ? { send_as: row.auth_send_as, to: row.auth_to } : null,
    sent_at: row.sent_at,
    completed_at: row.completed_at,
    chat_closed_at: row.chat_closed_at,
    created: row.created,
    updated: row.updated,
  };
}

/** The container as callbacks name it. */
export function containerRef(row: ContainerRow, shared: RequestRow) {
  return { id: row.id, identifier: shared.identifier, state: row.state };
}

/** The container's email text. */
export function presentEmail(row: ContainerEmailRow) {
  return {
    id: row.id,
    container: row.container_id,
    subject: row.subject,
    body: row.body,
    created: row.created,
    updated: row.updated,
  };
}

/** A recipient. */
export function presentRecipient(row: RecipientRow) {
  return {
    id: row.id,
    container: row.container_id,
    active: row.active === 1,
    first_name: row.first_name,
    last_name: row.last_name,
    created: row.created,
    updated: row.updated,
  };
}

/** A recipient item; `link` is the session URL once the item was notified. */
export function presentItem(row: RecipientItemRow, link: string | null) {
  return {
    id: row.id,
    recipient: row.recipient_id,
    container: row.container_id,
    interface_class: row.interface_class,
    value: row.value,
    link,
    created: row.created,
    updated: row.updated,
  };
}

/** An owner's chat message. */
export function presentMessage(row: MessageRow) {
  return {
    id: row.id,
    container: row.container_id,
    title: row.title,
    body: row.body,
    created: row.created,
    updated: row.updated,
  };
}

/** A recipient's chat reply. */
export function presentReply(row: ReplyRow) {
  return {
    id: row.id,
    container: row.container_id,
    recipient: row.recipient_id,
    body: row.body,
    created: row.created,
    updated: row.updated,
  };
}

/** A feature's extensions as a list (lower case, no dots), or null for any. */
function extensionsOf(row: FeatureRow): string[] | null {
  return row.allowed_file_extensions ? row.allowed_file_extensions.split(",") : null;
}

const num = (v: number | null) => (v === null ? null : Number(v));

/** What every feature view shows, enrichments included. */
export function featureBase(row: FeatureRow, permissions: number[], after: number[] = []) {
  return {
    id: row.id,
    container: row.container_id,
    state: row.state,
    expiration: row.expires_at,
    recipient_permissions: permissions,
    after,
    created: row.created,
    updated: row.updated,
  };
}

/** A pushpull feature: a push or pull exchange shaped like a request. */
export function presentPushPull(
  row: FeatureRow,
  permissions: number[],
  tags: MediaTagRow[] = [],
  after: number[] = [],
) {
  return {
    ...featureBase(row, permissions, after),
    type: row.direction as "push" | "pull",
    message: row.description,
    receiver_message: row.receiver_message,
    requester_privatenotes: row.requester_privatenotes,
    is_draft: false,
    is_expired: row.state === "expired",
    complete: row.state === "complete",
    allowed_file_extensions: extensionsOf(row),
    max_file_size: num(row.max_file_size),
    max_files: num(row.max_files),
    media_tags: tags.filter((t) => t.feature_id === row.id).map(presentTag),
  };
}

/** A pull feature of a P2 container. */
export function presentPull(row: FeatureRow, permissions: number[], after: number[] = []) {
  return {
    ...featureBase(row, permissions, after),
    title: row.title,
    description: row.description,
    receiver_message: row.receiver_message,
    allowed_file_extensions: extensionsOf(row),
    max_file_size: num(row.max_file_size),
    max_files: num(row.max_files),
  };
}

/** A push feature of a P2 container. */
export function presentPush(row: FeatureRow, permissions: number[], after: number[] = []) {
  return {
    ...featureBase(row, permissions, after),
    title: row.title,
    description: row.description,
    max_file_downloads: num(row.max_file_downloads),
  };
}

/** A media tag. */
export function presentTag(row: MediaTagRow) {
  return { id: row.id, pushpull: row.feature_id, name: row.name, created: row.created, updated: row.updated };
}

/**
 * The `feature` object of a `feature` callback; an extension kind's nested object comes from the kind
 * (`extension`), push and pull build theirs here.
 */
export function featureEventBody(
  row: FeatureRow,
  permissions: number[],
  extension?: Record<string, unknown>,
  after: number[] = [],
) {
  const details = {
    id: row.id,
    container: row.container_id,
    allowed_extensions: extensionsOf(row),
    max_file_size: num(row.max_file_size),
    max_files: num(row.max_files),
    max_file_downloads: num(row.max_file_downloads),
    receiver_message: row.receiver_message,
    recipient_permissions: permissions,
  };
  return {
    id: row.id,
    container: row.container_id,
    feature_attr: row.kind,
    type: row.direction === "none" ? null : row.direction,
    title: row.title,
    description: row.description,
    state: row.state,
    expiration: row.expires_at,
    created: row.created,
    updated: row.updated,
    after,
    [row.kind]: extension ? { id: row.id, container: row.container_id, ...extension } : details,
  };
}

import type { Generated } from "kysely";

/**
 * Row types of every table, as Kysely sees them. Booleans are stored as 0/1 integers and
 * timestamps as fixed-width ISO text (src/shared/time.ts) so both dialects behave the same.
 */

export interface AccountsTable {
  id: Generated<number>;
  email: string;
  name: string;
  /** JSON text of AccountSettings (src/features/auth/account-settings.ts). */
  settings: string;
  created: string;
  updated: string;
}

export interface ApplicationsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  key_prefix: string;
  key_hash: string;
  /** Space-separated scopes, or "*" for all. */
  scopes: string;
  revoked_at: string | null;
  last_used_at: string | null;
  created: string;
  updated: string;
}

export interface AuditEntriesTable {
  id: Generated<number>;
  account_id: number;
  seq: number;
  partition_key: string;
  row_key: string;
  timestamp: string;
  code: string;
  api_key_id: string;
  related_model: string;
  relation_key: string;
  value: string;
  from_address: string;
  method: string;
  path: string;
  data: string;
  content_type: string;
  etag: string;
  prev_hash: string;
  hash: string;
}

export interface AuditChainHeadsTable {
  account_id: number;
  seq: number;
  hash: string;
}

export type JobState = "queued" | "running" | "done" | "dead";

export interface JobsTable {
  id: Generated<number>;
  kind: string;
  payload: string;
  state: JobState;
  run_at: string;
  attempts: number;
  max_attempts: number;
  locked_by: string | null;
  locked_until: string | null;
  last_error: string | null;
  finished_at: string | null;
  created: string;
  updated: string;
}

export interface ContactsTable {
  id: Generated<number>;
  account_id: number;
  first_name: string;
  last_name: string;
  created: string;
  updated: string;
}

export interface ContactMethodsTable {
  id: Generated<number>;
  account_id: number;
  contact_id: number;
  interface_class: string;
  value: string;
  created: string;
  updated: string;
}

export interface RequestersTable {
  id: Generated<number>;
  account_id: number;
  first_name: string;
  last_name: string;
  email: string;
  mobile: string | null;
  company: string | null;
  role: string | null;
  location: string | null;
  facebook: string | null;
  linkedin: string | null;
  twitter: string | null;
  skype: string | null;
  avatar: string | null;
  created: string;
  updated: string;
}

export interface RequestsTable {
  id: Generated<number>;
  account_id: number;
  identifier: string;
  type: "push" | "pull";
  message: string;
  requester_privatenotes: string;
  is_draft: number;
  complete: number;
  is_expired: number;
  receiver_message: string | null;
  short_message: string;
  long_message_subject: string;
  long_message: string;
  callback_url: string | null;
  requester_id: number | null;
  email_template_slug: string | null;
  tfa_send_to: "email" | "sms" | null;
  tfa_send_to_value: string | null;
  tfa_times_sent: number;
  /** Comma-separated lower-case extensions without dots a pull request accepts; null = any. */
  allowed_extensions: string | null;
  max_file_bytes: number | null;
  expires_at: string | null;
  sent_at: string | null;
  completed_at: string | null;
  callback_status: string | null;
  callback_tries: number;
  created: string;
  updated: string;
}

export interface RequestContactsTable {
  request_id: number;
  contact_id: number;
  position: number;
}

export type MediaState = "uploading" | "available" | "removed";

export interface MediaTable {
  id: Generated<number>;
  account_id: number;
  request_id: number;
  name: string;
  content_type: string;
  extension: string;
  /** Stored file name shown as `file` inside a request's media. */
  file: string;
  bytes: number;
  total_chunks: number;
  received_chunks: number;
  state: MediaState;
  sha256: string | null;
  md5: string | null;
  /** The media's data key wrapped by a KEK (src/crypto/envelope.ts); null once destroyed. */
  wrapped_key: string | null;
  uploaded_by: "owner" | "recipient";
  times_downloaded: number;
  max_allowed_times_downloaded: number | null;
  download_claimed_until: string | null;
  removed_at: string | null;
  created: string;
  updated: string;
}

export interface MediaPartsTable {
  media_id: number;
  /** 1-based chunk number. */
  part_index: number;
  plain_bytes: number;
  blob_key: string;
  /** Which blob store wrote it ("local", "s3", "memory"). */
  blob_store: string;
  created: string;
}

/** The whole database as Kysely sees it. Feature migrations add their tables here. */
export interface DB {
  accounts: AccountsTable;
  applications: ApplicationsTable;
  audit_entries: AuditEntriesTable;
  audit_chain_heads: AuditChainHeadsTable;
  jobs: JobsTable;
  contacts: ContactsTable;
  contact_methods: ContactMethodsTable;
  requesters: RequestersTable;
  requests: RequestsTable;
  request_contacts: RequestContactsTable;
  media: MediaTable;
  media_parts: MediaPartsTable;
}

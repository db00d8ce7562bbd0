import type { Generated } from "kysely";

/**
 * Row types of every table, as Kysely sees them. Booleans are stored as 0/1 integers and
 * timestamps as fixed-width ISO text (src/shared/time.ts) so both dialects behave the same.
 */

/** Rows per account in each counted list, kept by triggers (migrations 0036, 0042). */
export interface ListCountsTable {
  account_id: number;
  list: string;
  n: number;
}

export interface AccountsTable {
  id: Generated<number>;
  email: string;
  name: string;
  /** JSON object of per-account settings (push_expiry_days, callback_shape, secure_callbacks, ...); each feature documents its keys. */
  settings: string;
  /** The recipients' language when their browser names none Ferry supports, and of emails and SMS (en, es, fr, de, pt). */
  default_language: Generated<string>;
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

/** Indexed by (account_id, seq), each filter column + seq, (account_id, related_model, relation_key, seq) and (account_id, timestamp) (migration 0016). */
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
  /** Per filter column: the entry's position among the account's entries with the same value (migration 0008). */
  partition_key_ord: Generated<number>;
  code_ord: Generated<number>;
  related_model_ord: Generated<number>;
  path_ord: Generated<number>;
  from_address_ord: Generated<number>;
  method_ord: Generated<number>;
  content_type_ord: Generated<number>;
}

export interface AuditChainHeadsTable {
  account_id: number;
  seq: number;
  hash: string;
}

/** Per account, the last audit entry deleted by retention: the chain continues from (seq, hash). */
export interface AuditCheckpointsTable {
  account_id: number;
  seq: number;
  hash: string;
  /** Timestamp of that entry. */
  timestamp: string;
  /** Entries deleted by retention so far. */
  deleted_count: number;
  updated: string;
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
  /** Wrong two-factor codes since the last correct one or the owner's last reset. */
  tfa_failures: Generated<number>;
  /** Comma-separated lower-case extensions without dots a pull request accepts; null = any. */
  allowed_extensions: string | null;
  max_file_bytes: number | null;
  expires_at: string | null;
  sent_at: string | null;
  completed_at: string | null;
  callback_status: string | null;
  callback_tries: number;
  /** "request", or "container": a container's row in the id space it shares with requests. */
  kind: Generated<"request" | "container">;
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
  /** Random token of the current download-once claim (0004); only its holder completes or releases it. */
  download_claim_token: string | null;
  removed_at: string | null;
  /** The container feature the file belongs to (null for a request's file). */
  feature_id: Generated<number | null>;
  /** The container recipient who uploaded it in their session; null otherwise. */
  recipient_id: Generated<number | null>;
  /** Size in bytes the uploader declared with the first chunk (0014); the chunks must add up to it. */
  declared_bytes: Generated<number | null>;
  /** The uploader's fingerprint of the file (0014); a later chunk that carries another is refused. */
  fingerprint: Generated<string | null>;
  /** Chunks from the first that `digest_state` covers (0040, ADR 0075); null before any. */
  digest_chunks: Generated<number | null>;
  /** Saved running MD5 and SHA-256 of those chunks, with the hash of their blob keys (JSON). */
  digest_state: Generated<string | null>;
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
  /** Base64 of the blob's 21-byte header (0004); reads check the stored blob against it. */
  header: string | null;
  created: string;
}

/**
 * One counted download of a file with a download limit (0010, ADR 0021): its downloader may resume
 * it with Range until `grace_until` without counting another download.
 */
export interface MediaDownloadsTable {
  id: Generated<number>;
  account_id: number;
  media_id: number;
  /** Who downloaded: `application:<id>` (an owner's API key) or `recipient:<request id>`. */
  downloader: string;
  /** 1 once a transfer of it (the first, or a resume up to the last byte) released every byte. */
  complete: number;
  /** Until when the downloader may resume it. */
  grace_until: string;
  /** Lease of resumes in progress, renewed while they stream; the file outlives it. */
  resuming_until: string | null;
  created: string;
  updated: string;
}

/** Delivery state of one notification. */
export type NotificationStatus = "queued" | "sent" | "failed";

/** One notification: one contact method of a request, per send_notification call. */
/** Indexed by (request_id, id) and (account_id, id) (migration 0017). */
export interface NotificationsTable {
  id: Generated<number>;
  account_id: number;
  request_id: number;
  contact_id: number | null;
  contact_method_id: number | null;
  contact_first_name: string;
  contact_last_name: string;
  contact_method_value: string;
  contact_method_interface_class: string;
  status: NotificationStatus;
  was_sent: number;
  removed: number;
  error: string | null;
  attempts: number;
  /** When send_notification queued it (the API's `sent_at`, milliseconds). */
  sent_at: string;
  delivered_at: string | null;
  provider_message_id: string | null;
  /** Random token of the email open-tracking pixel; null for SMS. */
  open_token: string | null;
  opened_at: string | null;
  /** The container recipient item notified (container notifications). */
  recipient_item_id: Generated<number | null>;
  /** A message composed when queued (container notifications), sealed under the key ring. */
  sealed_message: Generated<string | null>;
  /** JSON merged into the outcome callback's body instead of the Request object (container notifications). */
  event_context: Generated<string | null>;
  created: string;
  updated: string;
}

/** An account's email template (slug unique per account); subject and html are Liquid sources. */
export interface EmailTemplatesTable {
  id: Generated<number>;
  account_id: number;
  slug: string;
  subject: string;
  html: string;
  created: string;
  updated: string;
}

/** A message kept by the capture mailer or capture SMS sender instead of being delivered. */
export interface CapturedMessagesTable {
  id: Generated<number>;
  account_id: number;
  channel: "email" | "sms";
  to_address: string;
  from_address: string;
  subject: string;
  text_body: string;
  html_body: string | null;
  /** JSON array of the absolute links in the message. */
  links: string;
  notification_id: number | null;
  created: string;
}

/** An account's own SMTP server; the password is AES-256-GCM encrypted with key ring key `password_kid`. */
export interface AccountSmtpSettingsTable {
  account_id: number;
  host: string;
  port: number;
  tls: "none" | "starttls" | "tls";
  username: string | null;
  password_ciphertext: string | null;
  password_kid: string | null;
  from_email: string;
  created: string;
  updated: string;
}

/** An account's callback signing secret; the newest generation signs, older ones until `expires_at`. */
export interface CallbackSecretsTable {
  id: Generated<number>;
  account_id: number;
  generation: number;
  /** The 32 secret bytes wrapped with the key ring's "secrets" key (src/crypto/envelope.ts format). */
  wrapped_secret: string;
  /** Null for the current secret; set when a rotation replaced it. */
  expires_at: string | null;
  created: string;
}

/** Event types sent to callback URLs (spec: Events). */
export type CallbackEventType =
  | "request_complete"
  | "contact_notification_send"
  | "container"
  | "session_opened"
  | "message_reply"
  | "feature";

/** One event of a request with a callback_url; `payload` is the nested event JSON. */
export interface CallbackEventsTable {
  id: Generated<number>;
  account_id: number;
  request_id: number | null;
  type: CallbackEventType;
  payload: string;
  /** Standard Webhooks `webhook-id`, the same on every attempt. */
  webhook_id: string;
  /** The `callbacks.event` job that recorded it (idempotency), null when recorded in the emitter's transaction. */
  source_job_id: number | null;
  created: string;
}

/** Where a delivery stands. */
export type CallbackDeliveryStatus = "pending" | "delivered" | "failed" | "stopped";

/** The delivery of one event to one URL. */
export interface CallbackDeliveriesTable {
  id: Generated<number>;
  account_id: number;
  event_id: number;
  request_id: number | null;
  type: CallbackEventType;
  url: string;
  status: CallbackDeliveryStatus;
  /** Attempts made in total. */
  tries: number;
  /** Attempts since the delivery was (re)started; indexes the retry schedule. */
  round_attempts: number;
  /** The job that makes the next attempt; any other job for this delivery is stale. */
  job_id: number | null;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: string | null;
  created: string;
  updated: string;
}

/** One HTTP attempt of a delivery. */
export interface CallbackAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  job_id: number | null;
  number: number;
  trigger: "automatic" | "redelivery";
  attempted_at: string;
  duration_ms: number;
  status_code: number | null;
  outcome: "success" | "http_error" | "gone" | "timeout" | "network_error" | "blocked";
  error: string | null;
  response_excerpt: string | null;
}

/** A two-factor code sent to a recipient; only its keyed hash is stored. */
export interface RecipientTfaCodesTable {
  id: Generated<number>;
  request_id: number;
  /** HMAC-SHA256 of the code under a key-ring derived key (hex). */
  code_hash: string;
  /** Wrong codes entered against this code; 5 locks it. */
  attempts: number;
  expires_at: string;
  consumed_at: string | null;
  created: string;
}

/** An account's white-label settings for recipient pages. */
/** A font file of an account's branding, served at `/r/<identifier>/fonts/<name>`. */
export interface AccountBrandingFontsTable {
  account_id: number;
  /** File name, e.g. `brand-regular.woff2`; its extension matches the content. */
  name: string;
  /** `font/woff2` or `font/woff`. */
  content_type: string;
  data_base64: string;
  bytes: number;
  sha256: string;
  created: string;
  updated: string;
}

export interface AccountBrandingTable {
  account_id: number;
  /** Owner CSS, served as a stylesheet only (at most 100 KB). */
  css: string;
  /** SHA-256 of css (cache busting). */
  css_hash: string;
  logo_base64: string | null;
  logo_content_type: string | null;
  logo_hash: string | null;
  /** Custom recipient host name (lower case), unique across accounts. */
  recipient_host: string | null;
  created: string;
  updated: string;
}

/** The whole database as Kysely sees it. Feature migrations add their tables here. */
/** Where a container stands. */
export type ContainerState = "draft" | "sent" | "complete" | "expired";

/** A container: its row in `containers`, beside its row in `requests` (same id). */
export interface ContainersTable {
  id: number;
  account_id: number;
  page_type: "pushpull" | "p2";
  display_chat: number;
  state: Generated<ContainerState>;
  auth_send_as: "email" | "sms" | null;
  auth_to: string | null;
  sent_at: string | null;
  completed_at: string | null;
  /** When the owner closed the container's chat (ADR 0057); null while it is open. */
  chat_closed_at: Generated<string | null>;
  created: string;
  updated: string;
}

/** The email text of a container (one per container). */
export interface ContainerEmailsTable {
  id: Generated<number>;
  account_id: number;
  container_id: number;
  subject: string;
  body: string;
  created: string;
  updated: string;
}

/** A person a container is for. */
export interface ContainerRecipientsTable {
  id: Generated<number>;
  account_id: number;
  container_id: number;
  first_name: string;
  last_name: string;
  active: number;
  created: string;
  updated: string;
}

/** How a recipient is reached (email, sms) or a link the owner hands over (link); one session link each. */
export interface ContainerRecipientItemsTable {
  id: Generated<number>;
  account_id: number;
  container_id: number;
  recipient_id: number;
  interface_class: "email" | "sms" | "link";
  value: string;
  session_token: string | null;
  notified_at: string | null;
  opened_at: Generated<string | null>;
  created: string;
  updated: string;
}

/** A chat message of the owner to a container's recipients. */
export interface ContainerMessagesTable {
  id: Generated<number>;
  account_id: number;
  container_id: number;
  title: string;
  body: string;
  created: string;
  updated: string;
}

/** A recipient's chat reply. */
export interface ContainerMessageRepliesTable {
  id: Generated<number>;
  account_id: number;
  container_id: number;
  recipient_id: number;
  body: string;
  created: string;
  updated: string;
}

/** Where a feature stands. */
export type FeatureState = "pending" | "complete" | "expired";

/** One interaction of a container, of any kind (one id space for every kind). */
export interface ContainerFeaturesTable {
  id: Generated<number>;
  account_id: number;
  container_id: number;
  kind: string;
  /** push and pull take files; enrichment kinds take none ("none"). */
  direction: "push" | "pull" | "none";
  title: string;
  description: string;
  requester_privatenotes: string;
  receiver_message: string | null;
  state: Generated<FeatureState>;
  expires_at: string | null;
  /** Comma-separated lower-case extensions without dots; null = any. */
  allowed_file_extensions: string | null;
  max_file_size: number | null;
  max_files: number | null;
  max_file_downloads: number | null;
  /** JSON object of what a kind needs beyond the common columns. */
  settings: Generated<string>;
  completed_at: string | null;
  /** When the feature's files were destroyed at its expiry, whatever its state (ADR 0058). */
  files_destroyed_at: Generated<string | null>;
  created: string;
  updated: string;
}

/** A recipient allowed to see a feature (no rows: every recipient of the container). */
export interface ContainerFeaturePermissionsTable {
  feature_id: number;
  recipient_id: number;
}

/** A named slot for an expected file of a feature. */
export interface ContainerMediaTagsTable {
  id: Generated<number>;
  account_id: number;
  feature_id: number;
  name: string;
  created: string;
  updated: string;
}

/** A dashboard user of an account (owner or colleague). */
export interface DashboardUsersTable {
  id: Generated<number>;
  account_id: number;
  /** Lower case; unique across accounts. */
  email: string;
  /** `scrypt$N$r$p$salt$hash` (base64url parts); null until the setup link is used. */
  password_hash: string | null;
  /** JSON of the sealed TOTP secret (kid + AES-GCM ciphertext); null until enrolment starts. */
  totp_secret: string | null;
  /** When TOTP enrolment was confirmed with a code; null before. */
  totp_enabled_at: string | null;
  /** The last TOTP time step accepted (a code of that step or earlier is a replay). */
  totp_last_step: Generated<number>;
  /** JSON array of SHA-256 hex hashes of unused recovery codes. */
  recovery_codes: Generated<string>;
  failed_attempts: Generated<number>;
  locked_until: string | null;
  /** SHA-256 hex of the one-time setup link token; null once used. */
  setup_token_hash: string | null;
  setup_expires_at: string | null;
  invited_by: number | null;
  last_sign_in_at: string | null;
  created: string;
  updated: string;
}

/** A dashboard sign-in session (cookie holds the token; only its hash is stored). */
export interface DashboardSessionsTable {
  id: Generated<number>;
  token_hash: string;
  user_id: number;
  account_id: number;
  /** "password" (awaits the TOTP code), "enrol" (awaits TOTP enrolment), "full". */
  stage: string;
  ip: Generated<string>;
  user_agent: Generated<string>;
  created: string;
  last_seen_at: string;
  /** Absolute expiry. */
  expires_at: string;
}

/** A feature waits for another of its container to complete (`after`). */
export interface ContainerFeaturePrerequisitesTable {
  feature_id: number;
  after_id: number;
}

/** The kind-specific part of an enrichment feature (ADR 0063). */
export interface EnrichmentFeaturesTable {
  feature_id: number;
  account_id: number;
  kind: string;
  /** The kind's own status (pending, returned, signed, declined, ...). */
  status: string;
  /** JSON of what the owner gave. */
  payload: Generated<string>;
  /** JSON of the outcome; sealed (kid + ciphertext) when `result_kid` is set. */
  result_kid: string | null;
  result: string | null;
  provider: Generated<string>;
  connection_id: number | null;
  provider_ref: string | null;
  /** When the retention purge destroyed the result. */
  result_purged_at: string | null;
  created: string;
  updated: string;
}

/** An account's chosen provider for one enrichment kind. */
export interface ProviderConnectionsTable {
  id: Generated<number>;
  account_id: number;
  kind: string;
  provider: string;
  /** "test" or "live". */
  mode: Generated<string>;
  credentials_kid: string | null;
  /** Sealed JSON of the provider's settings; never returned. */
  credentials: string | null;
  /** SHA-256 hex of the webhook URL's secret (the lookup key of the ingress). */
  webhook_secret_hash: string;
  webhook_secret_kid: string;
  /** The webhook secret, sealed (shown to the owner in the webhook URL). */
  webhook_secret: string;
  created: string;
  updated: string;
}

/** A verified provider webhook, stored sealed once per (connection, event id). */
export interface ProviderWebhookEventsTable {
  id: Generated<number>;
  account_id: number;
  connection_id: number;
  provider: string;
  event_id: string;
  body_kid: string;
  body: string;
  received_at: string;
  processed_at: string | null;
  outcome: string | null;
}

/** One disclosure a recipient accepted (the consent ledger). */
/** A signing template (0038): an account's PDF with named fields per role. */
export interface EsignTemplatesTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  /** The media id of the PDF. */
  document: number;
  document_sha256: string;
  /** JSON [{width, height}] per page. */
  pages: string;
  /** JSON array of role names. */
  roles: string;
  /** JSON array of fields (as the esign step takes them). */
  fields: string;
  created: string;
  updated: string;
}

export interface ConsentsTable {
  id: Generated<number>;
  account_id: number;
  container_id: number;
  recipient_id: number;
  feature_id: number | null;
  disclosure_id: string;
  disclosure_version: string;
  text_sha256: string;
  accepted_at: string;
  ip: Generated<string>;
  user_agent: Generated<string>;
  /** How the recipient was authenticated: link, link+code, ... */
  auth_method: string;
}

/** One row per master key kid a node started with: a one-way fingerprint (migration 0032, ADR 0066). */
export interface KeyFingerprintsTable {
  kid: string;
  fingerprint: string;
  recorded_at: string;
}

/** One row (id 1): bumped by every application revocation (migration 0033, ADR 0067). */
export interface RevocationEpochTable {
  id: number;
  epoch: number | string;
}

export interface DB {
  accounts: AccountsTable;
  applications: ApplicationsTable;
  dashboard_users: DashboardUsersTable;
  dashboard_sessions: DashboardSessionsTable;
  audit_entries: AuditEntriesTable;
  audit_chain_heads: AuditChainHeadsTable;
  audit_checkpoints: AuditCheckpointsTable;
  jobs: JobsTable;
  contacts: ContactsTable;
  contact_methods: ContactMethodsTable;
  requesters: RequestersTable;
  requests: RequestsTable;
  request_contacts: RequestContactsTable;
  media: MediaTable;
  media_parts: MediaPartsTable;
  media_downloads: MediaDownloadsTable;
  notifications: NotificationsTable;
  email_templates: EmailTemplatesTable;
  captured_messages: CapturedMessagesTable;
  list_counts: ListCountsTable;
  account_smtp_settings: AccountSmtpSettingsTable;
  callback_secrets: CallbackSecretsTable;
  callback_events: CallbackEventsTable;
  callback_deliveries: CallbackDeliveriesTable;
  callback_attempts: CallbackAttemptsTable;
  recipient_tfa_codes: RecipientTfaCodesTable;
  account_branding: AccountBrandingTable;
  account_branding_fonts: AccountBrandingFontsTable;
  containers: ContainersTable;
  container_emails: ContainerEmailsTable;
  container_recipients: ContainerRecipientsTable;
  container_recipient_items: ContainerRecipientItemsTable;
  container_messages: ContainerMessagesTable;
  container_message_replies: ContainerMessageRepliesTable;
  container_features: ContainerFeaturesTable;
  container_feature_permissions: ContainerFeaturePermissionsTable;
  container_media_tags: ContainerMediaTagsTable;
  container_feature_prerequisites: ContainerFeaturePrerequisitesTable;
  enrichment_features: EnrichmentFeaturesTable;
  provider_connections: ProviderConnectionsTable;
  provider_webhook_events: ProviderWebhookEventsTable;
  consents: ConsentsTable;
  esign_templates: EsignTemplatesTable;
  key_fingerprints: KeyFingerprintsTable;
  revocation_epoch: RevocationEpochTable;
}

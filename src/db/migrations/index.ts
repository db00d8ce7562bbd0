import type { Migration } from "kysely";
import * as m0001 from "./0001_foundation.js";
import * as m0002 from "./0002_core_domain.js";
import * as m0003 from "./0003_requests.js";
import * as m0004 from "./0004_media.js";
import * as m0005 from "./0005_notifications.js";
import * as m0006 from "./0006_callbacks.js";
import * as m0007 from "./0007_recipient.js";
import * as m0008 from "./0008_audit_search.js";
import * as m0009 from "./0009_containers.js";
import * as m0012 from "./0012_tfa_failures.js";
import * as m0013 from "./0013_session_uploads.js";
import * as m0014 from "./0014_upload_fingerprints.js";
import * as m0015 from "./0015_download_grace.js";
import * as m0016 from "./0016_audit_relation_filters.js";
import * as m0017 from "./0017_notification_list.js";
import * as m0018 from "./0018_branding_fonts.js";
import * as m0019 from "./0019_account_language.js";
import * as m0020 from "./0020_dashboard_users.js";
import * as m0021 from "./0021_requests_list_index.js";
import * as m0022 from "./0022_audit_partial_indexes.js";
import * as m0023 from "./0023_dashboard_invites_per_account.js";
import * as m0027 from "./0027_container_chat_closed.js";
import * as m0028 from "./0028_feature_files_destroyed.js";
import * as m0030 from "./0030_enrichments.js";
import * as m0032 from "./0032_key_fingerprints.js";
import * as m0033 from "./0033_revocation_epoch.js";
import * as m0036 from "./0036_list_counts.js";
import * as m0038 from "./0038_esign_templates.js";
import * as m0040 from "./0040_media_digest_state.js";
import * as m0042 from "./0042_more_list_counts.js";

/** Every migration in order. Names sort; add new ones at the end, never edit landed ones. */
export const migrations: Record<string, Migration> = {
  "0001_foundation": m0001,
  "0002_core_domain": m0002,
  "0003_requests": m0003,
  "0004_media": m0004,
  "0005_notifications": m0005,
  "0006_callbacks": m0006,
  "0007_recipient": m0007,
  "0008_audit_search": m0008,
  "0009_containers": m0009,
  "0012_tfa_failures": m0012,
  "0013_session_uploads": m0013,
  "0014_upload_fingerprints": m0014,
  "0015_download_grace": m0015,
  "0016_audit_relation_filters": m0016,
  "0017_notification_list": m0017,
  "0018_branding_fonts": m0018,
  "0019_account_language": m0019,
  "0020_dashboard_users": m0020,
  "0021_requests_list_index": m0021,
  "0022_audit_partial_indexes": m0022,
  "0023_dashboard_invites_per_account": m0023,
  "0027_container_chat_closed": m0027,
  "0028_feature_files_destroyed": m0028,
  "0030_enrichments": m0030,
  "0032_key_fingerprints": m0032,
  "0033_revocation_epoch": m0033,
  "0036_list_counts": m0036,
  "0038_esign_templates": m0038,
  "0040_media_digest_state": m0040,
  "0042_more_list_counts": m0042,
};

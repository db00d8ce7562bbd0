import type { AuthContext } from "../../shared/caller.js";
import type { Containers } from "../containers/index.js";
import { type ConsentRow, consentsOf } from "./enrichments.repository.js";
import type { EnrichmentsService } from "./enrichments.service.js";

/** Allow-lists a consent row. */
export function presentConsent(row: ConsentRow) {
  return {
    id: row.id,
    container: row.container_id,
    recipient: row.recipient_id,
    feature: row.feature_id,
    disclosure_id: row.disclosure_id,
    disclosure_version: row.disclosure_version,
    text_sha256: row.text_sha256,
    accepted_at: row.accepted_at,
    ip: row.ip,
    user_agent: row.user_agent,
    auth_method: row.auth_method,
  };
}

/** The consents of the account's container `rawId` (404 when absent or foreign). */
export async function containerConsents(
  engine: EnrichmentsService,
  containers: Pick<Containers["containers"], "get">,
  auth: AuthContext,
  rawId: string,
) {
  const container = await containers.get(auth, rawId);
  return (await consentsOf(engine.deps.database.db, container.id)).map(presentConsent);
}

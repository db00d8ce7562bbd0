import type { Insertable, Selectable, Updateable } from "kysely";
import type { Executor } from "../../db/database.js";
import type {
  ConsentsTable,
  EnrichmentFeaturesTable,
  ProviderConnectionsTable,
  ProviderWebhookEventsTable,
} from "../../db/schema.js";

/** The kind-specific row of an enrichment feature. */
export type EnrichmentRow = Selectable<EnrichmentFeaturesTable>;
/** An account's provider connection for one kind. */
export type ConnectionRow = Selectable<ProviderConnectionsTable>;
/** A verified provider webhook in the inbox. */
export type WebhookEventRow = Selectable<ProviderWebhookEventsTable>;
/** One accepted disclosure. */
export type ConsentRow = Selectable<ConsentsTable>;

/** Inserts the kind-specific row of a new enrichment feature. */
export async function insertEnrichment(
  ex: Executor,
  values: Insertable<EnrichmentFeaturesTable>,
): Promise<void> {
  await ex.insertInto("enrichment_features").values(values).execute();
}

/** The enrichment row of feature `featureId`. */
export async function findEnrichment(
  ex: Executor,
  featureId: number,
  opts: { forUpdate?: boolean } = {},
): Promise<EnrichmentRow | undefined> {
  let q = ex.selectFrom("enrichment_features").selectAll().where("feature_id", "=", featureId);
  if (opts.forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** Updates the enrichment row of `featureId`. */
export async function updateEnrichment(
  ex: Executor,
  featureId: number,
  values: Updateable<EnrichmentFeaturesTable>,
): Promise<void> {
  await ex.updateTable("enrichment_features").set(values).where("feature_id", "=", featureId).execute();
}

/**
 * A step being started at its vendor holds this mark in `provider_ref` (with the time it was
 * taken) until the vendor's reference replaces it: one start at a time per step.
 */
export const STARTING_MARK = "starting:";

/** True when `ref` is a start in progress, not a vendor's reference. */
export function isStartingMark(ref: string | null): boolean {
  return ref?.startsWith(STARTING_MARK) === true;
}

/** A start mark older than this is left by a process that died mid-start and may be taken over. */
const STALE_START_MS = 2 * 60_000;

/**
 * Takes the right to start step `featureId` at its vendor: true when this caller set the mark
 * (the step had no reference, or a start mark left stale), false when another start holds it or
 * the step is started already. One conditional UPDATE, so concurrent callers get one true.
 */
export async function claimStart(ex: Executor, featureId: number, now: Date, mark: string): Promise<boolean> {
  const stale = `${STARTING_MARK}${new Date(now.getTime() - STALE_START_MS).toISOString()}`;
  const result = await ex
    .updateTable("enrichment_features")
    .set({ provider_ref: mark })
    .where("feature_id", "=", featureId)
    .where((eb) =>
      eb.or([
        eb("provider_ref", "is", null),
        eb.and([eb("provider_ref", "like", `${STARTING_MARK}%`), eb("provider_ref", "<", stale)]),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Replaces this caller's start mark by `ref` (the vendor's reference, or null to give it up). */
export async function settleStart(
  ex: Executor,
  featureId: number,
  mark: string,
  ref: string | null,
): Promise<void> {
  await ex
    .updateTable("enrichment_features")
    .set({ provider_ref: ref })
    .where("feature_id", "=", featureId)
    .where("provider_ref", "=", mark)
    .execute();
}

/** The enrichment feature a provider reference names on a connection. */
export async function findByProviderRef(
  ex: Executor,
  connectionId: number,
  ref: string,
): Promise<EnrichmentRow | undefined> {
  return ex
    .selectFrom("enrichment_features")
    .selectAll()
    .where("connection_id", "=", connectionId)
    .where("provider_ref", "=", ref)
    .executeTakeFirst();
}

/** Pending features started at a vendor (a provider_ref, a connection), oldest first, at most `limit`. */
export async function openProviderSteps(ex: Executor, limit: number): Promise<EnrichmentRow[]> {
  return ex
    .selectFrom("enrichment_features as e")
    .innerJoin("container_features as f", "f.id", "e.feature_id")
    .selectAll("e")
    .where("f.state", "=", "pending")
    .where("e.provider_ref", "is not", null)
    .where("e.provider_ref", "not like", `${STARTING_MARK}%`)
    .where("e.connection_id", "is not", null)
    .orderBy("e.feature_id")
    .limit(limit)
    .execute();
}

/** Complete features of `kind` finished before `before` whose result is still kept, at most `limit`. */
export async function resultsDue(
  ex: Executor,
  kind: string,
  before: string,
  limit: number,
): Promise<{ feature_id: number; account_id: number }[]> {
  return ex
    .selectFrom("enrichment_features as e")
    .innerJoin("container_features as f", "f.id", "e.feature_id")
    .select(["e.feature_id", "e.account_id"])
    .where("e.kind", "=", kind)
    .where("e.result_purged_at", "is", null)
    .where("e.result", "is not", null)
    .where("f.state", "!=", "pending")
    .where("f.completed_at", "<=", before)
    .orderBy("e.feature_id")
    .limit(limit)
    .execute();
}

// ---------------------------------------------------------------------------------------------
// provider connections

/** Inserts a connection. */
export async function insertConnection(
  ex: Executor,
  values: Insertable<ProviderConnectionsTable>,
): Promise<ConnectionRow> {
  return ex.insertInto("provider_connections").values(values).returningAll().executeTakeFirstOrThrow();
}

/** The account's connection `id`. */
export async function findConnection(
  ex: Executor,
  accountId: number,
  id: number,
): Promise<ConnectionRow | undefined> {
  return ex
    .selectFrom("provider_connections")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
}

/** A connection by id (jobs). */
export async function findConnectionById(ex: Executor, id: number): Promise<ConnectionRow | undefined> {
  return ex.selectFrom("provider_connections").selectAll().where("id", "=", id).executeTakeFirst();
}

/** The account's connection for `kind`. */
export async function connectionForKind(
  ex: Executor,
  accountId: number,
  kind: string,
): Promise<ConnectionRow | undefined> {
  return ex
    .selectFrom("provider_connections")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("kind", "=", kind)
    .executeTakeFirst();
}

/** The connection whose webhook secret hashes to `hash`. */
export async function connectionByWebhookHash(
  ex: Executor,
  hash: string,
): Promise<ConnectionRow | undefined> {
  return ex
    .selectFrom("provider_connections")
    .selectAll()
    .where("webhook_secret_hash", "=", hash)
    .executeTakeFirst();
}

/** The account's connections, oldest first. */
export async function listConnections(ex: Executor, accountId: number): Promise<ConnectionRow[]> {
  return ex
    .selectFrom("provider_connections")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("id")
    .execute();
}

/** Stores a connection's sealed settings; returns it. */
export async function setConnectionCredentials(
  ex: Executor,
  id: number,
  sealed: { kid: string; ciphertext: string },
): Promise<ConnectionRow> {
  return ex
    .updateTable("provider_connections")
    .set({ credentials_kid: sealed.kid, credentials: sealed.ciphertext })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes a connection. */
export async function deleteConnection(ex: Executor, id: number): Promise<void> {
  await ex.deleteFrom("provider_connections").where("id", "=", id).execute();
}

// ---------------------------------------------------------------------------------------------
// webhook inbox

/**
 * Records a verified webhook event once per (connection, event id); undefined when it was recorded
 * already (a replay).
 */
export async function insertWebhookEvent(
  ex: Executor,
  values: Insertable<ProviderWebhookEventsTable>,
): Promise<WebhookEventRow | undefined> {
  return ex
    .insertInto("provider_webhook_events")
    .values(values)
    .onConflict((oc) => oc.columns(["connection_id", "event_id"]).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** An inbox event by id. */
export async function findWebhookEvent(ex: Executor, id: number): Promise<WebhookEventRow | undefined> {
  return ex.selectFrom("provider_webhook_events").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Marks an inbox event processed (once); false when another run did already. */
export async function markWebhookProcessed(
  ex: Executor,
  id: number,
  now: string,
  outcome: string,
): Promise<boolean> {
  const res = await ex
    .updateTable("provider_webhook_events")
    .set({ processed_at: now, outcome })
    .where("id", "=", id)
    .where("processed_at", "is", null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

// ---------------------------------------------------------------------------------------------
// consent ledger

/** Records an accepted disclosure. */
export async function insertConsent(ex: Executor, values: Insertable<ConsentsTable>): Promise<ConsentRow> {
  return ex.insertInto("consents").values(values).returningAll().executeTakeFirstOrThrow();
}

/** The disclosure `disclosureId` at `version` with text hash `sha` a recipient accepted in a container. */
export async function findConsent(
  ex: Executor,
  containerId: number,
  recipientId: number,
  disclosure: { id: string; version: string; sha: string },
): Promise<ConsentRow | undefined> {
  return ex
    .selectFrom("consents")
    .selectAll()
    .where("container_id", "=", containerId)
    .where("recipient_id", "=", recipientId)
    .where("disclosure_id", "=", disclosure.id)
    .where("disclosure_version", "=", disclosure.version)
    .where("text_sha256", "=", disclosure.sha)
    .executeTakeFirst();
}

/** Every consent of a container, oldest first. */
export async function consentsOf(ex: Executor, containerId: number): Promise<ConsentRow[]> {
  return ex
    .selectFrom("consents")
    .selectAll()
    .where("container_id", "=", containerId)
    .orderBy("id")
    .execute();
}

/** The recipients of a container with their first email item, oldest first. */
export async function recipientsOf(
  ex: Executor,
  containerId: number,
): Promise<{ id: number; name: string; email: string | null }[]> {
  const rows = await ex
    .selectFrom("container_recipients as r")
    .leftJoin("container_recipient_items as i", (j) =>
      j.onRef("i.recipient_id", "=", "r.id").on("i.interface_class", "=", "email"),
    )
    .select(["r.id", "r.first_name", "r.last_name", "i.value as email"])
    .where("r.container_id", "=", containerId)
    .orderBy("r.id")
    .orderBy("i.id")
    .execute();
  const out = new Map<number, { id: number; name: string; email: string | null }>();
  for (const r of rows) {
    if (out.has(r.id)) continue;
    out.set(r.id, { id: r.id, name: `${r.first_name} ${r.last_name}`.trim(), email: r.email ?? null });
  }
  return [...out.values()];
}

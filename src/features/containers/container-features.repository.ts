import type { Insertable, Selectable, Updateable } from "kysely";
import type { Executor } from "../../db/database.js";
import type { ContainerFeaturesTable, ContainerMediaTagsTable } from "../../db/schema.js";
import type { Window } from "./containers.repository.js";

/** A feature of a container, of any kind. */
export type FeatureRow = Selectable<ContainerFeaturesTable>;
/** A media tag of a feature. */
export type MediaTagRow = Selectable<ContainerMediaTagsTable>;

/** Inserts a feature. */
export async function insertFeature(
  ex: Executor,
  values: Insertable<ContainerFeaturesTable>,
): Promise<FeatureRow> {
  return ex.insertInto("container_features").values(values).returningAll().executeTakeFirstOrThrow();
}

/** The feature `id` of `accountId` (undefined for absent or foreign ids). */
export async function findFeature(
  ex: Executor,
  accountId: number,
  id: number,
  opts: { forUpdate?: boolean } = {},
): Promise<FeatureRow | undefined> {
  let q = ex
    .selectFrom("container_features")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", id);
  if (opts.forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** The feature `id` of any account (for jobs and sessions that resolved its container already). */
export async function findFeatureById(ex: Executor, id: number): Promise<FeatureRow | undefined> {
  return ex.selectFrom("container_features").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Every feature of a container, oldest first. */
export async function featuresOf(ex: Executor, containerId: number): Promise<FeatureRow[]> {
  return ex
    .selectFrom("container_features")
    .selectAll()
    .where("container_id", "=", containerId)
    .orderBy("id")
    .execute();
}

/** A page of the account's features of the given kinds, oldest first, optionally of one container. */
export async function listFeatures(
  ex: Executor,
  accountId: number,
  filter: { kinds: string[]; containerId?: number | undefined },
  window: Window,
): Promise<{ rows: FeatureRow[]; count: number }> {
  let base = ex
    .selectFrom("container_features")
    .where("account_id", "=", accountId)
    .where("kind", "in", filter.kinds);
  if (filter.containerId !== undefined) base = base.where("container_id", "=", filter.containerId);
  const [rows, total] = await Promise.all([
    base.selectAll().orderBy("id").limit(window.limit).offset(window.offset).execute(),
    base.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow(),
  ]);
  return { rows, count: Number(total.n) };
}

/** Updates a feature; returns it. */
export async function updateFeature(
  ex: Executor,
  id: number,
  values: Updateable<ContainerFeaturesTable>,
): Promise<FeatureRow> {
  return ex
    .updateTable("container_features")
    .set(values)
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Moves a pending feature to `state` (complete or expired) unless it already left pending; false
 * when another transaction got there first.
 */
export async function finishFeature(
  ex: Executor,
  id: number,
  state: "complete" | "expired",
  v: { now: string; receiverMessage?: string | null },
): Promise<boolean> {
  const res = await ex
    .updateTable("container_features")
    .set({
      state,
      completed_at: v.now,
      updated: v.now,
      ...(v.receiverMessage !== undefined ? { receiver_message: v.receiverMessage } : {}),
    })
    .where("id", "=", id)
    .where("state", "=", "pending")
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Deletes a feature (its permissions, tags and media rows cascade). */
export async function deleteFeature(ex: Executor, id: number): Promise<void> {
  await ex.deleteFrom("container_features").where("id", "=", id).execute();
}

/**
 * Features whose expiry has passed and whose files were not destroyed yet, pending or complete
 * (oldest expiry first), at most `limit`. The partial index of migration 0028 holds only those.
 */
export async function dueFeatures(
  ex: Executor,
  now: string,
  limit: number,
): Promise<{ id: number; account_id: number; container_id: number }[]> {
  return ex
    .selectFrom("container_features")
    .select(["id", "account_id", "container_id"])
    .where("files_destroyed_at", "is", null)
    .where("expires_at", "<=", now)
    .orderBy("expires_at")
    .limit(limit)
    .execute();
}

/** Records that a feature's files were destroyed at its expiry; false when another sweep did already. */
export async function markFilesDestroyed(ex: Executor, id: number, now: string): Promise<boolean> {
  const res = await ex
    .updateTable("container_features")
    .set({ files_destroyed_at: now, updated: now })
    .where("id", "=", id)
    .where("files_destroyed_at", "is", null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

// ---------------------------------------------------------------------------------------------
// permissions

/** The recipients allowed to see each feature (a feature absent from the map: every recipient). */
export async function permissionsOf(ex: Executor, featureIds: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  if (featureIds.length === 0) return out;
  const rows = await ex
    .selectFrom("container_feature_permissions")
    .select(["feature_id", "recipient_id"])
    .where("feature_id", "in", featureIds)
    .orderBy("recipient_id")
    .execute();
  for (const r of rows) out.set(r.feature_id, [...(out.get(r.feature_id) ?? []), r.recipient_id]);
  return out;
}

/** Replaces a feature's permissions with `recipientIds` (empty: every recipient). */
export async function setPermissions(ex: Executor, featureId: number, recipientIds: number[]): Promise<void> {
  await ex.deleteFrom("container_feature_permissions").where("feature_id", "=", featureId).execute();
  if (recipientIds.length === 0) return;
  await ex
    .insertInto("container_feature_permissions")
    .values(recipientIds.map((recipient_id) => ({ feature_id: featureId, recipient_id })))
    .execute();
}

// ---------------------------------------------------------------------------------------------
// media tags

/** Inserts a media tag. */
export async function insertTag(
  ex: Executor,
  values: Insertable<ContainerMediaTagsTable>,
): Promise<MediaTagRow> {
  return ex.insertInto("container_media_tags").values(values).returningAll().executeTakeFirstOrThrow();
}

/** The tag `id` of `accountId`. */
export async function findTag(ex: Executor, accountId: number, id: number): Promise<MediaTagRow | undefined> {
  return ex
    .selectFrom("container_media_tags")
    .selectAll()
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .executeTakeFirst();
}

/** The tags of the given features, oldest first. */
export async function tagsOf(ex: Executor, featureIds: number[]): Promise<MediaTagRow[]> {
  if (featureIds.length === 0) return [];
  return ex
    .selectFrom("container_media_tags")
    .selectAll()
    .where("feature_id", "in", featureIds)
    .orderBy("id")
    .execute();
}

/** Renames a tag; returns it. */
export async function renameTag(ex: Executor, id: number, name: string, now: string): Promise<MediaTagRow> {
  return ex
    .updateTable("container_media_tags")
    .set({ name, updated: now })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes a tag. */
export async function deleteTag(ex: Executor, id: number): Promise<void> {
  await ex.deleteFrom("container_media_tags").where("id", "=", id).execute();
}

// ---------------------------------------------------------------------------------------------
// prerequisites (`after`)

/** The features each feature waits for (a feature absent from the map waits for none). */
export async function prerequisitesOf(ex: Executor, featureIds: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  if (featureIds.length === 0) return out;
  const rows = await ex
    .selectFrom("container_feature_prerequisites")
    .select(["feature_id", "after_id"])
    .where("feature_id", "in", featureIds)
    .orderBy("after_id")
    .execute();
  for (const r of rows) out.set(r.feature_id, [...(out.get(r.feature_id) ?? []), r.after_id]);
  return out;
}

/** Every `after` edge of a container's features (for cycle checks). */
export async function prerequisitesOfContainer(
  ex: Executor,
  containerId: number,
): Promise<{ feature_id: number; after_id: number }[]> {
  return ex
    .selectFrom("container_feature_prerequisites as p")
    .innerJoin("container_features as f", "f.id", "p.feature_id")
    .select(["p.feature_id", "p.after_id"])
    .where("f.container_id", "=", containerId)
    .execute();
}

/** Replaces the features `featureId` waits for. */
export async function setPrerequisites(ex: Executor, featureId: number, afterIds: number[]): Promise<void> {
  await ex.deleteFrom("container_feature_prerequisites").where("feature_id", "=", featureId).execute();
  if (afterIds.length === 0) return;
  await ex
    .insertInto("container_feature_prerequisites")
    .values(afterIds.map((after_id) => ({ feature_id: featureId, after_id })))
    .execute();
}

/** The pending features that wait for `featureId`. */
export async function pendingDependentsOf(ex: Executor, featureId: number): Promise<FeatureRow[]> {
  return ex
    .selectFrom("container_features as f")
    .innerJoin("container_feature_prerequisites as p", "p.feature_id", "f.id")
    .selectAll("f")
    .where("p.after_id", "=", featureId)
    .where("f.state", "=", "pending")
    .orderBy("f.id")
    .execute();
}

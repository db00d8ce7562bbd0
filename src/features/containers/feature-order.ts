/**
 * The `after` order of a container's features: a feature waits until every feature it names is
 * complete. The ids must be features of the same container and the order must have no cycle (422);
 * a waiting feature refuses the recipient's acts (409), and a pending feature's prerequisite cannot
 * be deleted (409).
 */
import type { Executor } from "../../db/database.js";
import { AppError, unprocessable, ValidationError } from "../../shared/errors.js";
import {
  type FeatureRow,
  featuresOf,
  pendingDependentsOf,
  prerequisitesOf,
  prerequisitesOfContainer,
} from "./container-features.repository.js";

/** Most features one feature may wait for. */
export const MAX_AFTER = 50;

/**
 * Checks the `after` list of feature `featureId` (undefined on create) of `containerId`: each id a
 * feature of that container, not itself, and no cycle once saved. 422 (a ValidationError on
 * `after`) otherwise.
 */
export async function checkAfter(
  ex: Executor,
  containerId: number,
  featureId: number | undefined,
  after: number[],
): Promise<void> {
  if (after.length === 0) return;
  if (after.length > MAX_AFTER)
    throw ValidationError.field("after", `Ensure this list has no more than ${MAX_AFTER} items.`);
  const known = new Set((await featuresOf(ex, containerId)).map((f) => f.id));
  for (const id of after) {
    if (id === featureId) throw unprocessableAfter("A feature cannot wait for itself.");
    if (!known.has(id)) throw unprocessableAfter(`Feature ${id} is not a feature of this container.`);
  }
  // A new feature has no dependents: it cannot close a cycle.
  if (featureId === undefined) return;
  const edges = new Map<number, number[]>();
  for (const e of await prerequisitesOfContainer(ex, containerId)) {
    if (e.feature_id === featureId) continue;
    edges.set(e.feature_id, [...(edges.get(e.feature_id) ?? []), e.after_id]);
  }
  edges.set(featureId, after);
  // Depth-first from the feature: reaching it again is a cycle.
  const seen = new Set<number>();
  const stack = [...after];
  while (stack.length) {
    const id = stack.pop()!;
    if (id === featureId)
      throw unprocessableAfter("This order has a cycle: the features would wait for each other.");
    if (seen.has(id)) continue;
    seen.add(id);
    stack.push(...(edges.get(id) ?? []));
  }
}

function unprocessableAfter(message: string): AppError {
  return unprocessable(`after: ${message}`);
}

/** The features `row` still waits for (named in its `after` and not complete), oldest first. */
export async function waitingFor(ex: Executor, row: FeatureRow): Promise<FeatureRow[]> {
  const after = (await prerequisitesOf(ex, [row.id])).get(row.id) ?? [];
  if (after.length === 0) return [];
  const all = await featuresOf(ex, row.container_id);
  return all.filter((f) => after.includes(f.id) && f.state !== "complete");
}

/** 409 when `row` waits for another feature: the recipient (or the sandbox) cannot act on it yet. */
export async function refuseWhileWaiting(ex: Executor, row: FeatureRow): Promise<void> {
  const waits = await waitingFor(ex, row);
  if (waits.length)
    throw new AppError(
      "CONFLICT",
      `This step waits for feature${waits.length > 1 ? "s" : ""} ${waits.map((f) => f.id).join(", ")} to complete.`,
    );
}

/** 409 when a pending feature waits for `row`: it cannot be deleted while it does. */
export async function refuseDeletingPrerequisite(ex: Executor, row: FeatureRow): Promise<void> {
  const dependents = await pendingDependentsOf(ex, row.id);
  if (dependents.length)
    throw new AppError(
      "CONFLICT",
      `Pending feature${dependents.length > 1 ? "s" : ""} ${dependents.map((f) => f.id).join(", ")} wait${dependents.length > 1 ? "" : "s"} for this one: change their \`after\` first.`,
    );
}

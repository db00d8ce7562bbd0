import type { Config } from "../../config/config.js";
import type { Database, Executor } from "../../db/database.js";
import type { AuthContext } from "../../shared/caller.js";
import type { Clock } from "../../shared/clock.js";
import { AppError, notFound, ValidationError } from "../../shared/errors.js";
import { parseId } from "../../shared/ids.js";
import { toTimestamp } from "../../shared/time.js";
import type { AuditCodeValue, AuditWriter } from "../audit/index.js";
import type { AccountsService } from "../auth/index.js";
import type { BrandingService } from "../branding/index.js";
import type { MediaService } from "../media/index.js";
import type { ComposedNotifications } from "../notifications/index.js";
import type { RequesterRow, RequestersService } from "../requesters/index.js";
import type { RequestRecords, RequestRow } from "../requests/index.js";
import type { ContainerEvents } from "./container-events.js";
import { type ContainerLock, type ContainerRow, findContainer } from "./containers.repository.js";
import type { FeatureExtensions } from "./feature-extensions.js";

/** What the container services work with. */
export interface ContainerDeps {
  database: Database;
  config: Config;
  clock: Clock;
  audit: AuditWriter;
  records: RequestRecords;
  requesters: Pick<RequestersService, "findForAccount">;
  media: MediaService;
  notifications: ComposedNotifications;
  events: ContainerEvents;
  branding: Pick<BrandingService, "recipientHost">;
  /** The account's default language, which the session emails and SMS are written in (ADR 0033). */
  accounts: Pick<AccountsService, "profile">;
  /** The enrichment kinds, plugged in at composition (ADR 0063). */
  extensions: FeatureExtensions;
}

/** A container with its row in the id space it shares with requests. */
export interface LoadedContainer {
  row: ContainerRow;
  shared: RequestRow;
}

/** The current time as stored text. */
export function nowText(deps: Pick<ContainerDeps, "clock">): string {
  return toTimestamp(deps.clock.now());
}

/** Reads a path id; a malformed id is answered like a missing one (404 naming `what`). */
export function pathId(raw: string | number, what: string): number {
  const id = parseId(raw);
  if (id === undefined) throw notFound(what);
  return id;
}

/**
 * The row lock to take on PostgreSQL, or none on SQLite (which runs one write transaction at a time,
 * and has no row locks).
 */
export function rowLock(
  deps: Pick<ContainerDeps, "database">,
  lock: ContainerLock,
): ContainerLock | undefined {
  return deps.database.dialect === "postgres" ? lock : undefined;
}

/** The account's container `id` with its shared row; 404 when absent or foreign. */
export async function loadContainer(
  deps: Pick<ContainerDeps, "records">,
  ex: Executor,
  accountId: number,
  id: number,
  opts: { forUpdate?: boolean; lock?: ContainerLock | undefined } = {},
): Promise<LoadedContainer> {
  const row = await findContainer(ex, accountId, id, opts);
  const shared = row && (await deps.records.findContainer(ex, accountId, id));
  if (!row || !shared) throw notFound("Container");
  return { row, shared };
}

/**
 * The container a body names in `field` (an integer or numeric string): 400 naming the field when
 * it is missing, malformed or not one of the account's containers.
 */
export async function containerOfBody(
  deps: Pick<ContainerDeps, "records">,
  ex: Executor,
  accountId: number,
  raw: unknown,
  field = "container",
  lock?: ContainerLock,
): Promise<LoadedContainer> {
  if (raw === undefined || raw === null || raw === "") {
    throw ValidationError.field(field, "This field is required.");
  }
  const id = parseId(raw);
  if (id === undefined)
    throw ValidationError.field(field, `Invalid pk "${String(raw)}" - object does not exist.`);
  try {
    return await loadContainer(deps, ex, accountId, id, { lock });
  } catch (error) {
    if (!(error instanceof AppError && error.code === "RESOURCE_NOT_FOUND")) throw error;
    throw ValidationError.field(field, `Invalid pk "${String(raw)}" - object does not exist.`);
  }
}

/** The account's requester `id`, or a 400 naming `requester`. */
export async function requesterOf(
  deps: Pick<ContainerDeps, "requesters">,
  ex: Executor,
  accountId: number,
  id: number,
): Promise<RequesterRow> {
  const row = await deps.requesters.findForAccount(ex, accountId, id);
  if (!row) throw ValidationError.field("requester", `Invalid pk "${id}" - object does not exist.`);
  return row;
}

/** Writes one audit entry of a container change in the caller's transaction. */
export async function recordChange(
  deps: Pick<ContainerDeps, "audit">,
  ex: Executor,
  auth: AuthContext,
  code: AuditCodeValue,
  model: string,
  id: number,
  value: string,
): Promise<void> {
  await deps.audit.write(ex, {
    accountId: auth.accountId,
    code,
    apiKeyId: auth.applicationId,
    relatedModel: model,
    relationKey: id,
    value,
  });
}

/**
 * The session URL of a recipient item's token: `<scheme>://<recipientHost>/s/<token>/` on the
 * account's custom host, else `<PUBLIC_BASE_URL>/s/<token>/`.
 */
export function sessionUrl(publicBaseUrl: string, recipientHost: string | null, token: string): string {
  if (!recipientHost) return `${publicBaseUrl}/s/${token}/`;
  return `${new URL(publicBaseUrl).protocol}//${recipientHost}/s/${token}/`;
}

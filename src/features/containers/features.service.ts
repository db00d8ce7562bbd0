import type { Executor } from "../../db/database.js";
import type { AuthContext } from "../../shared/caller.js";
import { notFound, unprocessable, ValidationError } from "../../shared/errors.js";
import { parseId } from "../../shared/ids.js";
import { type Paginated, paginate, parsePageRequest } from "../../shared/pagination.js";
import { toTimestamp } from "../../shared/time.js";
import {
  type Body,
  FieldErrors,
  readInteger,
  readString,
  requireObjectBody,
} from "../../shared/validation.js";
import { AuditCode } from "../audit/index.js";
import { presentMedia } from "../media/index.js";
import {
  deleteFeature,
  deleteTag,
  type FeatureRow,
  featuresOf,
  findFeature,
  findTag,
  insertFeature,
  insertTag,
  listFeatures,
  type MediaTagRow,
  permissionsOf,
  prerequisitesOf,
  renameTag,
  setPermissions,
  setPrerequisites,
  tagsOf,
  updateFeature,
} from "./container-features.repository.js";
import type { ContainerLifecycle } from "./container-lifecycle.service.js";
import { containerExpired } from "./container-state.js";
import {
  type ContainerDeps,
  containerOfBody,
  type LoadedContainer,
  nowText,
  pathId,
  recordChange,
  rowLock,
} from "./containers.context.js";
import {
  featureBase,
  presentPull,
  presentPush,
  presentPushPull,
  presentTag,
} from "./containers.presenter.js";
import { findContainerById, recipientsOf } from "./containers.repository.js";
import type { FeatureExtensions } from "./feature-extensions.js";
import { checkAfter, refuseDeletingPrerequisite, waitingFor } from "./feature-order.js";
import { optionalId } from "./recipients.service.js";

/** How many times a pushed file may be downloaded when the feature names no limit. */
const PUSH_DOWNLOADS_DEFAULT = 6;

/** The kinds the containers implement; enrichment kinds come through FeatureExtensions. */
export type FeatureKind = "pushpull" | "pull" | "push";

/** Creating or changing a feature of an extension kind: its own part, in the same transaction. */
export type ExtensionWrite = (trx: Executor, row: FeatureRow) => Promise<void>;

function isCoreKind(kind: string): kind is FeatureKind {
  return kind === "pushpull" || kind === "pull" || kind === "push";
}

const LIMITS = { title: 255, description: 20_000, notes: 5000, extensions: 50, tag: 255 } as const;

/** Where each kind's routes live, for pagination links. */
export const KIND_PATHS: Record<FeatureKind, string> = {
  pushpull: "/v1/module_container_pushpull/pushpullfeature/",
  pull: "/v1/module_container_pull/pull/",
  push: "/v1/module_container_push/push/",
};

/** A feature as the API shows it, by kind. */
export type FeatureView =
  | ReturnType<typeof presentPushPull>
  | ReturnType<typeof presentPull>
  | ReturnType<typeof presentPush>;

/** Feature fields as accepted from a client; absent fields are undefined. */
interface FeatureInput {
  direction?: "push" | "pull";
  title?: string;
  description?: string;
  notes?: string;
  extensions?: string[] | null;
  maxFileSize?: number | null;
  maxFiles?: number | null;
  maxDownloads?: number | null;
  expiresAt?: string | null;
  permissions?: number[];
  after?: number[];
}

/** Reads `allowed_file_extensions`: a list or a comma-separated string, without dots, lower case. */
function readExtensions(body: Body, errors: FieldErrors): string[] | null | undefined {
  const raw = body.allowed_file_extensions ?? body.allowed_extensions;
  if (raw === undefined) return undefined;
  if (raw === null || raw === "") return null;
  const list = Array.isArray(raw) ? raw : typeof raw === "string" ? raw.split(",") : undefined;
  if (!list) {
    errors.add("allowed_file_extensions", 'Expected a list of extensions such as ["pdf", "jpg"].');
    return undefined;
  }
  const out: string[] = [];
  for (const item of list) {
    const ext = typeof item === "string" ? item.trim().replace(/^\./, "").toLowerCase() : "";
    if (!/^[a-z0-9_+-]{1,20}$/.test(ext)) {
      errors.add(
        "allowed_file_extensions",
        `"${String(item)}" is not an extension (letters and digits, no dot).`,
      );
      return undefined;
    }
    if (!out.includes(ext)) out.push(ext);
  }
  if (out.length > LIMITS.extensions) {
    errors.add("allowed_file_extensions", `Ensure this list has no more than ${LIMITS.extensions} items.`);
    return undefined;
  }
  return out.length ? out : null;
}

/** Reads a list of ids (`recipient_permissions`, `after`): integers or numeric strings. */
function readPermissions(
  body: Body,
  errors: FieldErrors,
  field = "recipient_permissions",
): number[] | undefined {
  const raw = body[field];
  if (raw === undefined) return undefined;
  if (raw === null || raw === "") return [];
  const list = Array.isArray(raw) ? raw : String(raw).split(",");
  const out: number[] = [];
  for (const item of list) {
    const id = parseId(typeof item === "object" && item !== null ? (item as Body).id : item);
    if (id === undefined) {
      errors.add(field, `Invalid pk "${String(item)}" - object does not exist.`);
      return undefined;
    }
    if (!out.includes(id)) out.push(id);
  }
  return out;
}

/** Reads an expiry: an ISO 8601 date-time in the future is checked later; null clears it. */
function readExpiry(body: Body, errors: FieldErrors): string | null | undefined {
  const raw = readString(body, "expiration", errors, { max: 40, nullable: true });
  if (raw === undefined) return undefined;
  if (raw === null || raw === "") return null;
  const date = new Date(/[zZ]|[+-]\d{2}(:?\d{2})?$/.test(raw.slice(10)) ? raw : `${raw}Z`);
  if (!/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(raw) || Number.isNaN(date.getTime())) {
    errors.add("expiration", "Enter a valid ISO 8601 date-time, e.g. 2026-03-01T12:00:00Z.");
    return undefined;
  }
  return toTimestamp(date);
}

function readFeatureInput(kind: string, raw: Body, creating: boolean): FeatureInput {
  const errors = new FieldErrors();
  const out: FeatureInput = {};
  if (kind === "pushpull") {
    const type = readString(raw, "type", errors, { max: 10, required: creating });
    if (type === "push" || type === "pull") out.direction = type;
    else if (type !== undefined && type !== null)
      errors.add("type", `"${type}" is not a valid choice. Choose push or pull.`);
    const message = readString(raw, "message", errors, { max: LIMITS.description, nullable: true });
    if (message !== undefined) out.description = message ?? "";
    const notes = readString(raw, "requester_privatenotes", errors, { max: LIMITS.notes, nullable: true });
    if (notes !== undefined) out.notes = notes ?? "";
  } else {
    const title = readString(raw, "title", errors, { max: LIMITS.title, nullable: true });
    if (title !== undefined) out.title = title ?? "";
    const description = readString(raw, "description", errors, { max: LIMITS.description, nullable: true });
    if (description !== undefined) out.description = description ?? "";
  }
  if (kind === "pull" || kind === "pushpull") {
    const extensions = readExtensions(raw, errors);
    if (extensions !== undefined) out.extensions = extensions;
    const size = readInteger(raw, "max_file_size", errors, {
      min: 1,
      max: Number.MAX_SAFE_INTEGER,
      nullable: true,
    });
    if (size !== undefined) out.maxFileSize = size;
    const files = readInteger(raw, "max_files", errors, { min: 1, max: 10_000, nullable: true });
    if (files !== undefined) out.maxFiles = files;
  }
  if (kind === "push") {
    const downloads = readInteger(raw, "max_file_downloads", errors, {
      min: 1,
      max: 1_000_000,
      nullable: true,
    });
    if (downloads !== undefined) out.maxDownloads = downloads;
  }
  const expires = readExpiry(raw, errors);
  if (expires !== undefined) out.expiresAt = expires;
  const permissions = readPermissions(raw, errors);
  if (permissions !== undefined) out.permissions = permissions;
  const after = readPermissions(raw, errors, "after");
  if (after !== undefined) out.after = after;
  errors.throwIfAny();
  return out;
}

/**
 * Features of containers, one table and one id space for every kind: pushpull features
 * (`/v1/module_container_pushpull/pushpullfeature/`), P2 pull features (`/v1/module_container_pull/pull/`)
 * and P2 push features (`/v1/module_container_push/push/`), their media tags and permissions.
 */
export class FeaturesService {
  constructor(
    private readonly deps: ContainerDeps,
    private readonly lifecycle: Pick<ContainerLifecycle, "settleContainer">,
    private readonly extensions: FeatureExtensions,
  ) {}

  /** The API view of a feature of its kind (an extension kind's fields come from its module). */
  async present(ex: Executor, row: FeatureRow): Promise<FeatureView> {
    const permissions = (await permissionsOf(ex, [row.id])).get(row.id) ?? [];
    const after = (await prerequisitesOf(ex, [row.id])).get(row.id) ?? [];
    if (row.kind === "pushpull") return presentPushPull(row, permissions, await tagsOf(ex, [row.id]), after);
    if (row.kind === "pull") return presentPull(row, permissions, after);
    if (row.kind === "push") return presentPush(row, permissions, after);
    return {
      ...featureBase(row, permissions, after),
      title: row.title,
      description: row.description,
      ...(await this.extensions.present(ex, row)),
    } as unknown as FeatureView;
  }

  /** The features `row` still waits for (its `after` not complete yet). */
  async waitingFor(ex: Executor, row: FeatureRow): Promise<FeatureRow[]> {
    return waitingFor(ex, row);
  }

  /** The account's feature `id` of `kind` (404 when absent, foreign or of another kind). */
  async find(ex: Executor, accountId: number, rawId: string | number, kind: string): Promise<FeatureRow> {
    return this.require(ex, accountId, rawId, kind);
  }

  private async require(ex: Executor, accountId: number, rawId: string | number, kind?: string) {
    const row = await findFeature(ex, accountId, pathId(rawId, "Feature"));
    if (!row || (kind !== undefined && row.kind !== kind)) throw notFound("Feature");
    return row;
  }

  /**
   * 422 once the container expired (every feature expired, none complete): it takes no new features.
   * A complete container does: it becomes sent again (ADR 0057).
   */
  private async checkOpen(ex: Executor, c: LoadedContainer): Promise<void> {
    if (containerExpired(c.row, await featuresOf(ex, c.row.id), nowText(this.deps))) {
      throw unprocessable("The container is expired: it takes no new features.");
    }
  }

  /** 400 unless every recipient id belongs to the container. */
  private async checkPermissions(ex: Executor, containerId: number, ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    const known = new Set((await recipientsOf(ex, containerId)).map((r) => r.id));
    const unknown = ids.filter((id) => !known.has(id));
    if (unknown.length) {
      throw ValidationError.field(
        "recipient_permissions",
        `Invalid pk "${unknown[0]}" - not a recipient of this container.`,
      );
    }
  }

  /**
   * POST: a feature of `kind` on the `container` the body names (400 when it is not the account's;
   * 422 when it expired). A complete container becomes sent again, with its `container` callback.
   * Expiry defaults to CONTAINER_FEATURE_EXPIRY_HOURS. 201; ABA-0010.
   */
  async create(auth: AuthContext, kind: string, raw: unknown, extension?: ExtensionWrite) {
    const { deps } = this;
    const body = requireObjectBody(raw);
    if (!isCoreKind(kind) && !extension) throw notFound("Feature kind");
    const input = readFeatureInput(kind, body, true);
    return deps.database.db.transaction().execute(async (trx) => {
      // The container row is locked first, as settling it does, so a feature completing meanwhile
      // cannot leave it complete with this new feature pending.
      const c = await containerOfBody(
        deps,
        trx,
        auth.accountId,
        body.container,
        "container",
        rowLock(deps, "update"),
      );
      await this.checkOpen(trx, c);
      await this.checkPermissions(trx, c.row.id, input.permissions ?? []);
      await checkAfter(trx, c.row.id, undefined, input.after ?? []);
      const now = deps.clock.now();
      const ts = nowText(deps);
      const expires =
        input.expiresAt !== undefined
          ? input.expiresAt
          : toTimestamp(new Date(now.getTime() + deps.config.CONTAINER_FEATURE_EXPIRY_HOURS * 3600_000));
      if (expires !== null && expires <= ts)
        throw ValidationError.field("expiration", "Enter a time in the future.");
      const direction =
        kind === "pushpull" ? input.direction! : kind === "push" || kind === "pull" ? kind : "none";
      const row = await insertFeature(trx, {
        account_id: auth.accountId,
        container_id: c.row.id,
        kind,
        direction,
        title: input.title ?? "",
        description: input.description ?? "",
        requester_privatenotes: input.notes ?? "",
        receiver_message: null,
        expires_at: expires,
        allowed_file_extensions: input.extensions ? input.extensions.join(",") : null,
        max_file_size: input.maxFileSize ?? null,
        max_files: input.maxFiles ?? null,
        // A pushed file downloads six times unless the owner says otherwise (as clients expect).
        max_file_downloads: input.maxDownloads ?? (direction === "push" ? PUSH_DOWNLOADS_DEFAULT : null),
        completed_at: null,
        created: ts,
        updated: ts,
      });
      if (input.permissions?.length) await setPermissions(trx, row.id, input.permissions);
      if (input.after?.length) await setPrerequisites(trx, row.id, input.after);
      if (extension) await extension(trx, row);
      await recordChange(
        deps,
        trx,
        auth,
        AuditCode.ENTITY_CREATED,
        "feature",
        row.id,
        `${kind} in container ${c.row.id}`,
      );
      await this.lifecycle.settleContainer(trx, c.row.id);
      return this.present(trx, row);
    });
  }

  /** GET list of a kind, oldest first; `container=<id>`. */
  async list(
    auth: AuthContext,
    kind: string,
    query: Record<string, unknown>,
    path: string = KIND_PATHS[kind as FeatureKind],
  ): Promise<Paginated<unknown>> {
    const { deps } = this;
    const page = parsePageRequest(query);
    const containerId = optionalId(query.container, "container");
    const { db } = deps.database;
    const { rows, count } = await listFeatures(
      db,
      auth.accountId,
      { kinds: [kind], containerId },
      {
        offset: page.offset,
        limit: page.pageSize,
      },
    );
    const results: FeatureView[] = [];
    for (const row of rows) results.push(await this.present(db, row));
    return paginate(results, count, page, deps.config.publicBaseUrl, path, {
      container: query.container,
    });
  }

  /** GET by id (404 when absent, foreign, or of another kind). */
  async get(auth: AuthContext, kind: string, rawId: string) {
    const { db } = this.deps.database;
    return this.present(db, await this.require(db, auth.accountId, rawId, kind));
  }

  /**
   * PATCH: partial update; 422 once the feature is complete or expired, and for a pushpull's type
   * once its container was sent. ABA-0030.
   */
  async update(auth: AuthContext, kind: string, rawId: string, raw: unknown, extension?: ExtensionWrite) {
    const { deps } = this;
    const input = readFeatureInput(kind, requireObjectBody(raw), false);
    return deps.database.db.transaction().execute(async (trx) => {
      const row = await this.require(trx, auth.accountId, rawId, kind);
      if (row.state !== "pending") throw unprocessable(`The feature is ${row.state}: it cannot change.`);
      if (input.direction !== undefined && input.direction !== row.direction) {
        const c = await findContainerById(trx, row.container_id);
        if (c?.state !== "draft")
          throw unprocessable("The type of a feature of a sent container cannot change.");
      }
      if (input.permissions) await this.checkPermissions(trx, row.container_id, input.permissions);
      if (input.after) await checkAfter(trx, row.container_id, row.id, input.after);
      if (input.expiresAt && input.expiresAt <= nowText(deps)) {
        throw ValidationError.field("expiration", "Enter a time in the future.");
      }
      const updated = await updateFeature(trx, row.id, {
        ...(input.direction !== undefined ? { direction: input.direction } : {}),
        ...(input.title !== undefined ? { title: input.title } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.notes !== undefined ? { requester_privatenotes: input.notes } : {}),
        ...(input.extensions !== undefined
          ? { allowed_file_extensions: input.extensions ? input.extensions.join(",") : null }
          : {}),
        ...(input.maxFileSize !== undefined ? { max_file_size: input.maxFileSize } : {}),
        ...(input.maxFiles !== undefined ? { max_files: input.maxFiles } : {}),
        ...(input.maxDownloads !== undefined ? { max_file_downloads: input.maxDownloads } : {}),
        ...(input.expiresAt !== undefined ? { expires_at: input.expiresAt } : {}),
        updated: nowText(deps),
      });
      if (input.permissions) await setPermissions(trx, row.id, input.permissions);
      if (input.after) await setPrerequisites(trx, row.id, input.after);
      if (extension) await extension(trx, updated);
      await recordChange(deps, trx, auth, AuditCode.ENTITY_UPDATED, "feature", row.id, kind);
      return this.present(trx, updated);
    });
  }

  /**
   * DELETE: the feature with its files (blobs queued for deletion in the same transaction), then the
   * container's state follows the features left (a sent container whose last pending feature goes
   * completes). ABA-0020.
   */
  async delete(auth: AuthContext, kind: string, rawId: string): Promise<void> {
    const { deps } = this;
    await deps.database.db.transaction().execute(async (trx) => {
      const row = await this.require(trx, auth.accountId, rawId, kind);
      await refuseDeletingPrerequisite(trx, row);
      if (this.extensions.owns(row.kind)) await this.extensions.deleting(trx, row);
      await deps.media.queueBlobDeletionOfFeature(trx, row.id);
      await deleteFeature(trx, row.id);
      await recordChange(deps, trx, auth, AuditCode.ENTITY_DELETED, "feature", row.id, kind);
      await this.lifecycle.settleContainer(trx, row.container_id);
    });
  }

  /**
   * GET pull/{id}/pull_file/: a bare list of the files the recipients sent, each with an absolute
   * `download_url` that takes `Authorization: JWT`.
   */
  async pullFiles(auth: AuthContext, rawId: string) {
    const { deps } = this;
    const { db } = deps.database;
    const row = await this.require(db, auth.accountId, rawId);
    if (row.direction !== "pull") throw notFound("Pull feature");
    const media = await deps.media.rowsOfFeature(db, row.id);
    return media
      .filter((m) => m.uploaded_by === "recipient" && m.state === "available")
      .map((m) => ({
        id: m.id,
        name: m.name,
        content_type: m.content_type,
        extension: m.extension,
        bytes: Number(m.bytes),
        download_url: `${deps.config.publicBaseUrl}/v1/media/${m.id}/download`,
      }));
  }

  /** The media of a feature (any kind) as Media objects. */
  async files(auth: AuthContext, rawId: string) {
    const { db } = this.deps.database;
    const row = await this.require(db, auth.accountId, rawId);
    return (await this.deps.media.rowsOfFeature(db, row.id)).map(presentMedia);
  }

  /** POST mediatag/: `{pushpull, name}`; 422 once the feature is complete or expired. 201; ABA-0010. */
  async createTag(auth: AuthContext, raw: unknown) {
    const { deps } = this;
    const body = requireObjectBody(raw);
    const errors = new FieldErrors();
    const name = readString(body, "name", errors, { max: LIMITS.tag, required: true, notBlank: true });
    const featureRaw = body.pushpull ?? body.feature;
    if (featureRaw === undefined || featureRaw === null || featureRaw === "")
      errors.add("pushpull", "This field is required.");
    errors.throwIfAny();
    return deps.database.db.transaction().execute(async (trx) => {
      const id = parseId(featureRaw);
      const feature = id === undefined ? undefined : await findFeature(trx, auth.accountId, id);
      if (!feature)
        throw ValidationError.field(
          "pushpull",
          `Invalid pk "${String(featureRaw)}" - object does not exist.`,
        );
      if (feature.state !== "pending")
        throw unprocessable(`The feature is ${feature.state}: its tags cannot change.`);
      const now = nowText(deps);
      const row = await insertTag(trx, {
        account_id: auth.accountId,
        feature_id: feature.id,
        name: name!,
        created: now,
        updated: now,
      });
      await recordChange(
        deps,
        trx,
        auth,
        AuditCode.ENTITY_CREATED,
        "media_tag",
        row.id,
        `feature ${feature.id}`,
      );
      return presentTag(row);
    });
  }

  private async requireOpenTag(ex: Executor, accountId: number, rawId: string): Promise<MediaTagRow> {
    const tag = await findTag(ex, accountId, pathId(rawId, "Media tag"));
    if (!tag) throw notFound("Media tag");
    const feature = await findFeature(ex, accountId, tag.feature_id);
    if (feature && feature.state !== "pending") {
      throw unprocessable(`The feature is ${feature.state}: its tags cannot change.`);
    }
    return tag;
  }

  /** PATCH mediatag/{id}: its name. ABA-0030. */
  async renameTag(auth: AuthContext, rawId: string, raw: unknown) {
    const { deps } = this;
    const errors = new FieldErrors();
    const name = readString(requireObjectBody(raw), "name", errors, {
      max: LIMITS.tag,
      required: true,
      notBlank: true,
    });
    errors.throwIfAny();
    return deps.database.db.transaction().execute(async (trx) => {
      const tag = await this.requireOpenTag(trx, auth.accountId, rawId);
      const row = await renameTag(trx, tag.id, name!, nowText(deps));
      await recordChange(deps, trx, auth, AuditCode.ENTITY_UPDATED, "media_tag", row.id, "");
      return presentTag(row);
    });
  }

  /** DELETE mediatag/{id}. ABA-0020. */
  async deleteTag(auth: AuthContext, rawId: string): Promise<void> {
    const { deps } = this;
    await deps.database.db.transaction().execute(async (trx) => {
      const tag = await this.requireOpenTag(trx, auth.accountId, rawId);
      await deleteTag(trx, tag.id);
      await recordChange(deps, trx, auth, AuditCode.ENTITY_DELETED, "media_tag", tag.id, "");
    });
  }
}

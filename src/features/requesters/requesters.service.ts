import type { Database, Executor } from "../../db/database.js";
import type { AuthContext } from "../../shared/caller.js";
import type { Clock } from "../../shared/clock.js";
import { notFound } from "../../shared/errors.js";
import { parseId } from "../../shared/ids.js";
import type { PageRequest } from "../../shared/pagination.js";
import { toTimestamp } from "../../shared/time.js";
import { FieldErrors, requireObjectBody } from "../../shared/validation.js";
import { AuditCode, type AuditCodeValue, type AuditWriter } from "../audit/index.js";
import { presentRequester, type RequesterView } from "./requesters.presenter.js";
import {
  countRequesters,
  deleteRequesterRow,
  findRequester,
  findRequestersByIds,
  insertRequester,
  listRequesters,
  type RequesterFields,
  type RequesterRow,
  updateRequesterRow,
} from "./requesters.repository.js";
import { parseRequesterInput } from "./requesters.validation.js";

/** Requesters: the sender identities shown on recipient pages (spec: Requesters), per account. */
export class RequestersService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly audit: AuditWriter,
  ) {}

  private now(): string {
    return toTimestamp(this.clock.now());
  }

  private async record(ex: Executor, auth: AuthContext, code: AuditCodeValue, id: number, fields: string[]) {
    await this.audit.write(ex, {
      accountId: auth.accountId,
      code,
      apiKeyId: auth.applicationId,
      relatedModel: "requester",
      relationKey: id,
      // Field names only: the audit log is append-only, so personal data stays out of it.
      value: JSON.stringify({ fields }),
    });
  }

  /** POST /v1/requester/: first_name, last_name and email required; 400 on bad input. Audited ABA-0010. */
  async create(auth: AuthContext, body: unknown): Promise<RequesterView> {
    const b = requireObjectBody(body);
    const errors = new FieldErrors();
    const fields = parseRequesterInput(b, errors, "create");
    errors.throwIfAny();
    return this.database.db.transaction().execute(async (trx) => {
      const row = await insertRequester(trx, auth.accountId, fields as RequesterFields, this.now());
      await this.record(trx, auth, AuditCode.ENTITY_CREATED, row.id, Object.keys(fields));
      return presentRequester(row);
    });
  }

  /** GET /v1/requester/: one page of the account's requesters, newest first, and the total. */
  async list(auth: AuthContext, page: PageRequest): Promise<{ results: RequesterView[]; count: number }> {
    const { db } = this.database;
    const [rows, count] = await Promise.all([
      listRequesters(db, auth.accountId, { offset: page.offset, limit: page.pageSize }),
      countRequesters(db, auth.accountId),
    ]);
    return { results: rows.map(presentRequester), count };
  }

  /** GET /v1/requester/{id}/: 404 for a missing or foreign id. */
  async get(auth: AuthContext, rawId: string): Promise<RequesterView> {
    return presentRequester(await this.require(this.database.db, auth.accountId, rawId));
  }

  private async require(ex: Executor, accountId: number, rawId: string): Promise<RequesterRow> {
    const id = parseId(rawId);
    const row = id === undefined ? undefined : await findRequester(ex, accountId, id);
    if (!row) throw notFound("Requester");
    return row;
  }

  /**
   * PATCH (partial) or PUT (replace: first_name, last_name, email required, omitted optional
   * fields cleared) of /v1/requester/{id}/. Audited ABA-0030 with the changed field names.
   */
  async update(
    auth: AuthContext,
    rawId: string,
    body: unknown,
    mode: "patch" | "replace",
  ): Promise<RequesterView> {
    const b = requireObjectBody(body);
    const errors = new FieldErrors();
    const fields = parseRequesterInput(b, errors, mode);
    errors.throwIfAny();
    return this.database.db.transaction().execute(async (trx) => {
      const existing = await this.require(trx, auth.accountId, rawId);
      const row = await updateRequesterRow(trx, existing.id, fields, this.now());
      const changed = Object.keys(fields).filter(
        (k) => existing[k as keyof RequesterRow] !== row[k as keyof RequesterRow],
      );
      await this.record(trx, auth, AuditCode.ENTITY_UPDATED, row.id, changed);
      return presentRequester(row);
    });
  }

  /**
   * DELETE /v1/requester/{id}/: allowed while requests name it; those requests fall back to the
   * owner's profile. Audited ABA-0020.
   */
  async delete(auth: AuthContext, rawId: string): Promise<void> {
    await this.database.db.transaction().execute(async (trx) => {
      const row = await this.require(trx, auth.accountId, rawId);
      await deleteRequesterRow(trx, row.id);
      await this.record(trx, auth, AuditCode.ENTITY_DELETED, row.id, []);
    });
  }

  /** The account's requester `id`, or undefined when it is missing or belongs to another account. */
  async findForAccount(ex: Executor, accountId: number, id: number): Promise<RequesterRow | undefined> {
    return findRequester(ex, accountId, id);
  }

  /** Requesters by id, for presenting requests already scoped to an account. */
  async loadByIds(ex: Executor, ids: number[]): Promise<Map<number, RequesterRow>> {
    const rows = await findRequestersByIds(ex, [...new Set(ids)]);
    return new Map(rows.map((r) => [r.id, r]));
  }
}

import type { CapturedMessage, CaptureSink } from "../../adapters/mailer/capture-sink.js";
import type { Database } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import type { PageRequest } from "../../shared/pagination.js";
import { toTimestamp } from "../../shared/time.js";
import {
  type CapturedFilter,
  type CapturedMessageRow,
  countCapturedMessages,
  findCapturedMessage,
  insertCapturedMessage,
  listCapturedMessages,
} from "./notifications.repository.js";

/**
 * The sandbox outbox: where the capture transports keep the emails and SMS they do not deliver
 * (`GET /v1/sandbox/messages/`).
 */
export class CapturedOutbox implements CaptureSink {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
  ) {}

  /** Stores a captured email or SMS; returns its id. */
  async capture(message: CapturedMessage): Promise<number> {
    return insertCapturedMessage(this.database.db, message, toTimestamp(this.clock.now()));
  }

  /** A page of the account's captured messages, newest first, with the total count. */
  async list(
    accountId: number,
    filter: CapturedFilter,
    page: PageRequest,
  ): Promise<{ rows: CapturedMessageRow[]; count: number }> {
    const { db } = this.database;
    const [rows, count] = await Promise.all([
      listCapturedMessages(db, accountId, filter, page.pageSize, page.offset),
      countCapturedMessages(db, accountId, filter),
    ]);
    return { rows, count };
  }

  /** One captured message of the account (undefined for another account's id). */
  async get(accountId: number, id: number): Promise<CapturedMessageRow | undefined> {
    return findCapturedMessage(this.database.db, accountId, id);
  }
}

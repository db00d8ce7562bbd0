import type { Executor } from "../../db/database.js";
import type { CallbackSubjects } from "../callbacks/index.js";
import type { ContactUsage } from "../contacts/index.js";
import type { MediaTarget, MediaTargets } from "../media/index.js";
import type { TemplateUsage } from "../templates/index.js";
import type { RequestRow } from "./requests.presenter.js";
import {
  clearTfaFailures,
  clearTfaFailuresAfter,
  countTfaSend,
  deleteContainerRow,
  findContainerRow,
  findContainerRowByIdentifier,
  findContainerRows,
  findDuePushExpiries,
  findOpenSentRequestOfContact,
  findRequest,
  findRequestByIdentifier,
  findRequestCallbackUrl,
  findRequestForMedia,
  insertContainerRow,
  isTemplateUsedByOpenRequest,
  lockForTfaSend,
  lockRequestRow,
  markPullComplete,
  markPushExpired,
  reserveTfaFailure,
  updateContainerRow,
  updateRequestCallbackState,
} from "./requests.repository.js";

/**
 * The `requests` table's own state, with no dependency on other features: the reads and
 * transitions that features below the requests service need (contacts, templates, media and
 * callbacks ask through their ports) and those above use (notifications, lifecycle, recipient
 * pages). Every method runs through the caller's executor, usually its transaction.
 */
export class RequestRecords implements ContactUsage, TemplateUsage, MediaTargets, CallbackSubjects {
  constructor(private readonly dialect: "sqlite" | "postgres") {}

  /** The request `id` of `accountId` (undefined when absent or foreign). */
  find(ex: Executor, accountId: number, id: number): Promise<RequestRow | undefined> {
    return findRequest(ex, accountId, id);
  }

  /** The request with this public identifier (any state, any account), or undefined. */
  findByIdentifier(ex: Executor, identifier: string): Promise<RequestRow | undefined> {
    return findRequestByIdentifier(ex, identifier);
  }

  /** Locks the request row until the transaction ends (PostgreSQL; SQLite serialises writers). */
  lock(ex: Executor, id: number): Promise<void> {
    return lockRequestRow(ex, id, this.dialect === "postgres");
  }

  openSentRequestOf(ex: Executor, contactId: number): Promise<number | undefined> {
    return findOpenSentRequestOfContact(ex, contactId);
  }

  isUsedByOpenRequest(ex: Executor, accountId: number, slug: string): Promise<boolean> {
    return isTemplateUsedByOpenRequest(ex, accountId, slug);
  }

  findForMedia(ex: Executor, requestId: number): Promise<MediaTarget | undefined> {
    return findRequestForMedia(ex, requestId);
  }

  async callbackUrl(ex: Executor, accountId: number, requestId: number): Promise<string | null | undefined> {
    return (await findRequestCallbackUrl(ex, accountId, requestId))?.callback_url;
  }

  recordCallbackState(ex: Executor, requestId: number, status: string, countTry: boolean): Promise<void> {
    return updateRequestCallbackState(ex, requestId, status, countTry);
  }

  /** Serialises two-factor code sends of one request for the rest of the transaction. */
  lockForTfaSend(ex: Executor, id: number): Promise<void> {
    return lockForTfaSend(ex, id);
  }

  /** Counts a two-factor code sent for the request (`tfa_times_sent`). */
  countTfaSend(ex: Executor, id: number): Promise<void> {
    return countTfaSend(ex, id);
  }

  /** Sent push requests still open whose expires_at has passed (oldest first), at most `limit`. */
  duePushExpiries(ex: Executor, now: string, limit: number): Promise<{ id: number; account_id: number }[]> {
    return findDuePushExpiries(ex, now, limit);
  }

  /**
   * Marks an open, sent push request expired (complete, is_expired, completed_at); unless `force`,
   * only once its expires_at has passed. False when nothing matched.
   */
  markPushExpired(ex: Executor, requestId: number, now: string, force: boolean): Promise<boolean> {
    return markPushExpired(ex, requestId, now, force);
  }

  /** Marks an open pull request complete with the recipient's message; false when it already was. */
  markPullComplete(
    ex: Executor,
    requestId: number,
    receiverMessage: string | null,
    now: string,
  ): Promise<boolean> {
    return markPullComplete(ex, requestId, receiverMessage, now);
  }

  /**
   * Counts a two-factor attempt before it is checked; undefined when the request (or container)
   * already has `max` failures in a row.
   */
  reserveTfaFailure(ex: Executor, id: number, max: number): Promise<number | undefined> {
    return reserveTfaFailure(ex, id, max);
  }

  /** After a correct code numbered `reserved`: forgets the failures unless others locked the subject meanwhile. */
  clearTfaFailuresAfter(ex: Executor, id: number, reserved: number, max: number): Promise<boolean> {
    return clearTfaFailuresAfter(ex, id, reserved, max);
  }

  /** Forgets the two-factor failures when the owner sends the link again or changes the setting. */
  clearTfaFailures(ex: Executor, id: number): Promise<void> {
    return clearTfaFailures(ex, id);
  }

  /**
   * Containers share the requests' id space: each has a row here (kind 'container') with its
   * account, identifier, callback URL and requester. Inserts one and returns its id.
   */
  insertContainer(
    ex: Executor,
    v: {
      accountId: number;
      identifier: string;
      callbackUrl: string | null;
      requesterId: number | null;
      now: string;
    },
  ): Promise<number> {
    return insertContainerRow(ex, v);
  }

  /** A container's shared row (undefined when absent, foreign or not a container). */
  findContainer(ex: Executor, accountId: number, id: number): Promise<RequestRow | undefined> {
    return findContainerRow(ex, accountId, id);
  }

  /** The shared rows of the account's containers with these ids (absent or foreign ids left out). */
  findContainers(ex: Executor, accountId: number, ids: number[]): Promise<RequestRow[]> {
    return findContainerRows(ex, accountId, ids);
  }

  /** A container's shared row by its public identifier. */
  findContainerByIdentifier(ex: Executor, identifier: string): Promise<RequestRow | undefined> {
    return findContainerRowByIdentifier(ex, identifier);
  }

  /** Changes a container's callback URL and requester (only the fields given). */
  updateContainer(
    ex: Executor,
    id: number,
    v: { callbackUrl?: string | null; requesterId?: number | null; now: string },
  ): Promise<void> {
    return updateContainerRow(ex, id, v);
  }

  /** Deletes a container's shared row; everything of the container cascades. */
  deleteContainer(ex: Executor, id: number): Promise<void> {
    return deleteContainerRow(ex, id);
  }
}

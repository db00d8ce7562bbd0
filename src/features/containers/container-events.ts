import { randomBytes } from "node:crypto";
import type { Executor } from "../../db/database.js";
import type { CallbackEventType } from "../../db/schema.js";
import type { CallbackService } from "../callbacks/index.js";

/** A container callback's `callback_identifier`: 32 hex characters, unique per event. */
export function newCallbackIdentifier(): string {
  return randomBytes(16).toString("hex");
}

/**
 * Emits a container's callbacks through the one callback emitter, in the caller's transaction: the
 * body gets its `type` and a fresh `callback_identifier`; deliveries go to the container's
 * callback_url like every Ferry callback (signed, retried, listed).
 */
export class ContainerEvents {
  constructor(private readonly callbacks: Pick<CallbackService, "emitCallbackEvent">) {}

  async emit(
    trx: Executor,
    event: { accountId: number; containerId: number; type: CallbackEventType; body: Record<string, unknown> },
  ): Promise<void> {
    await this.callbacks.emitCallbackEvent(trx, {
      accountId: event.accountId,
      requestId: event.containerId,
      type: event.type,
      body: { type: event.type, callback_identifier: newCallbackIdentifier(), ...event.body },
    });
  }
}

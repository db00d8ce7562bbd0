/**
 * The port through which feature kinds beyond push and pull (the enrichments, ADR 0063) take part in
 * the containers' features without the containers importing them: the enrichments module implements
 * it and plugs it into the slot at composition. The containers call it to present an extension
 * feature, to build its `feature` callback's nested object, and when it expires or is deleted.
 */
import type { Executor } from "../../db/database.js";
import type { FeatureRow } from "./container-features.repository.js";

/** What the containers ask of the kinds they do not know. */
export interface FeatureExtensions {
  /** True when `kind` is an extension kind. */
  owns(kind: string): boolean;
  /** The kind-specific fields of the feature's API object (merged over the common fields). */
  present(ex: Executor, row: FeatureRow): Promise<Record<string, unknown>>;
  /** The nested object of the `feature` callback (named after the kind). */
  eventDetails(ex: Executor, row: FeatureRow): Promise<Record<string, unknown>>;
  /** In the transaction that expires a pending extension feature: the kind's status follows. */
  expired(ex: Executor, row: FeatureRow, now: string): Promise<void>;
  /** In the transaction that deletes an extension feature, before its row goes (cancel at the vendor...). */
  deleting(ex: Executor, row: FeatureRow): Promise<void>;
}

/** No extension kinds: what the containers use until the enrichments are plugged in. */
const NONE: FeatureExtensions = {
  owns: () => false,
  present: async () => ({}),
  eventDetails: async () => ({}),
  expired: async () => undefined,
  deleting: async () => undefined,
};

/** The slot the composition root fills once the enrichments are built (they are built after the containers). */
export class FeatureExtensionSlot implements FeatureExtensions {
  private impl: FeatureExtensions = NONE;

  /** Plugs in the implementation (once, at composition). */
  set(impl: FeatureExtensions): void {
    this.impl = impl;
  }

  owns(kind: string): boolean {
    return this.impl.owns(kind);
  }
  present(ex: Executor, row: FeatureRow): Promise<Record<string, unknown>> {
    return this.impl.present(ex, row);
  }
  eventDetails(ex: Executor, row: FeatureRow): Promise<Record<string, unknown>> {
    return this.impl.eventDetails(ex, row);
  }
  expired(ex: Executor, row: FeatureRow, now: string): Promise<void> {
    return this.impl.expired(ex, row, now);
  }
  deleting(ex: Executor, row: FeatureRow): Promise<void> {
    return this.impl.deleting(ex, row);
  }
}

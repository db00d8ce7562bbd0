/**
 * What a container's rows say about it beyond its stored state: whether it has expired (also in the
 * moments between its last expiry and the sweep that records it) and whether its chat still takes
 * messages (ADR 0057).
 */
import type { FeatureRow } from "./container-features.repository.js";
import type { ContainerRow } from "./containers.repository.js";

/** Why a container's chat takes no more messages: its owner closed it, or the container expired. */
export type ChatClosure = "closed" | "expired";

/** The 422 detail of a message or reply refused for each reason. */
export const CHAT_CLOSED_DETAIL: Record<ChatClosure, string> = {
  closed: "The owner closed this container's chat: it takes no more messages.",
  expired: "The container expired: its chat is closed.",
};

/**
 * True once the container expired: its state says so, or (before the sweep records it) every feature
 * of a sent container expired or is pending past its expiry, none complete. A container without
 * features, or with a complete one, never expires.
 */
export function containerExpired(container: ContainerRow, features: FeatureRow[], now: string): boolean {
  if (container.state === "expired") return true;
  if (container.state === "draft" || features.length === 0) return false;
  return features.every(
    (f) => f.state === "expired" || (f.state === "pending" && f.expires_at !== null && f.expires_at <= now),
  );
}

/**
 * Why the container's chat is closed, or undefined while it is open. Completing features never closes
 * it; the owner closing it, or the container expiring, does (a deleted container has no chat at all).
 */
export function chatClosure(
  container: ContainerRow,
  features: FeatureRow[],
  now: string,
): ChatClosure | undefined {
  if (container.chat_closed_at !== null) return "closed";
  return containerExpired(container, features, now) ? "expired" : undefined;
}

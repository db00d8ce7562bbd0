import type { CallbackAttemptRow, CallbackDeliveryRow } from "./callbacks.repository.js";

/** Payload shapes an account can choose (account setting `callback_shape`). */
export type CallbackShape = "nested" | "flat";

/** A delivery as the API shows it (list items). */
export interface DeliveryView {
  id: number;
  request: number | null;
  type: string;
  url: string;
  webhook_id: string;
  status: string;
  tries: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: string | null;
  created: string;
  updated: string;
}

/** One attempt as the API shows it. */
export interface AttemptView {
  id: number;
  number: number;
  trigger: string;
  attempted_at: string;
  duration_ms: number;
  status_code: number | null;
  outcome: string;
  error: string | null;
  response_excerpt: string | null;
}

/** Allow-lists a delivery's fields. */
export function presentDelivery(row: CallbackDeliveryRow & { webhook_id: string }): DeliveryView {
  return {
    id: row.id,
    request: row.request_id,
    type: row.type,
    url: row.url,
    webhook_id: row.webhook_id,
    status: row.status,
    tries: row.tries,
    next_attempt_at: row.status === "pending" ? row.next_attempt_at : null,
    last_attempt_at: row.last_attempt_at,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    delivered_at: row.delivered_at,
    created: row.created,
    updated: row.updated,
  };
}

/** Allow-lists an attempt's fields. */
export function presentAttempt(row: CallbackAttemptRow): AttemptView {
  return {
    id: row.id,
    number: row.number,
    trigger: row.trigger,
    attempted_at: row.attempted_at,
    duration_ms: row.duration_ms,
    status_code: row.status_code,
    outcome: row.outcome,
    error: row.error,
    response_excerpt: row.response_excerpt,
  };
}

/**
 * The body sent for an event in the account's shape. Nested is the event as emitted. Flat keeps the
 * top-level scalars (`type`, `message`, `status`) and lifts each top-level object's scalar fields to
 * `<object>_<field>` (`request_id`, `request_complete`, `notification_was_sent`...); arrays and
 * objects inside those objects (request `contact`, `media`, `requester`) are left out.
 */
export function shapeEventBody(
  nested: Record<string, unknown>,
  shape: CallbackShape,
): Record<string, unknown> {
  if (shape === "nested") return nested;
  const flat: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(nested)) {
    if (isScalar(value)) {
      flat[key] = value;
    } else if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      for (const [inner, innerValue] of Object.entries(value as Record<string, unknown>)) {
        if (isScalar(innerValue)) flat[`${key}_${inner}`] = innerValue;
      }
    }
  }
  return flat;
}

function isScalar(v: unknown): boolean {
  return v === null || typeof v === "string" || typeof v === "number" || typeof v === "boolean";
}

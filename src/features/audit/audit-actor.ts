/** The signed-in dashboard user behind a change, and where the change came from (audit fields). */
export interface AuditActor {
  userId: number;
  ip: string;
  method: string;
  path: string;
}

/**
 * The `value`, `from`, `method` and `path` of an audit entry for a change: with a dashboard user,
 * the value ends with `by user:<id>` (the id only: no email in the log) and the request is named.
 */
export function actorFields(
  actor: AuditActor | undefined,
  value: string,
): { value: string; from?: string; method?: string; path?: string } {
  if (!actor) return { value };
  return {
    value: `${value} by user:${actor.userId}`.trim(),
    from: actor.ip,
    method: actor.method,
    path: actor.path,
  };
}

import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { buildMedia, buildPushRequest } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";

/**
 * When the audit store refuses an API call's AAA-0010 entry, a read is not answered (503, nothing
 * of what was asked leaves) and a change keeps its answer (it committed with its own entry).
 */
describe("an API call whose audit entry cannot be written", () => {
  const h = useHarness();
  const db = () => h.t.ferry.database.db;
  const dialect = () => h.t.ferry.database.dialect;

  /** Makes the database refuse AAA-0010 entries for paths starting with `prefix`. */
  async function refuseCallEntries(prefix: string): Promise<void> {
    if (dialect() === "sqlite") {
      await sql
        .raw(
          `create trigger refuse_call_entries before insert on audit_entries
           when new.code = 'AAA-0010' and new.path like '${prefix}%'
           begin select raise(abort, 'audit store unavailable'); end`,
        )
        .execute(db());
    } else {
      await sql
        .raw(
          `create function refuse_call_entries() returns trigger language plpgsql as $$
           begin
             if new.code = 'AAA-0010' and new.path like '${prefix}%' then
               raise exception 'audit store unavailable';
             end if;
             return new;
           end $$;
           create trigger refuse_call_entries before insert on audit_entries
             for each row execute function refuse_call_entries();`,
        )
        .execute(db());
    }
  }

  afterEach(async () => {
    await sql
      .raw("drop trigger if exists refuse_call_entries" + (dialect() === "sqlite" ? "" : " on audit_entries"))
      .execute(db());
    if (dialect() === "postgres")
      await sql.raw("drop function if exists refuse_call_entries()").execute(db());
  });

  it("refuses a read with 503 and none of the resource, then answers once entries can be written", async () => {
    const request = await buildPushRequest(h.t, h.owner, { message: "Quarterly figures inside" });
    await refuseCallEntries(`/v1/request/${request.id}/`);

    const refused = await h.call("GET", `/v1/request/${request.id}/`);
    expect(refused.statusCode).toBe(503);
    expect(refused.headers["retry-after"]).toBe("1");
    expect(refused.json()).toEqual({
      code: "SERVICE_UNAVAILABLE",
      detail: "The call could not be recorded in the audit log, so it was not answered. Try again.",
    });
    expect(refused.body).not.toContain("Quarterly figures");

    // Other paths are unaffected, and the same read succeeds once the store takes entries again.
    expect((await h.call("GET", "/v1/account/")).statusCode).toBe(200);
    await sql
      .raw("drop trigger refuse_call_entries" + (dialect() === "sqlite" ? "" : " on audit_entries"))
      .execute(db());
    const answered = await h.call("GET", `/v1/request/${request.id}/`);
    expect(answered.statusCode).toBe(200);
    expect(answered.json().message).toBe("Quarterly figures inside");
  });

  it("refuses a download without sending the file's bytes or its headers", async () => {
    const media = await buildMedia(h.t, h.owner, { data: "confidential contents\n", name: "secret.txt" });
    await refuseCallEntries(`/v1/media/${media.id}/download`);

    const refused = await h.call("GET", `/v1/media/${media.id}/download`);
    expect(refused.statusCode).toBe(503);
    expect(refused.body).not.toContain("confidential");
    expect(refused.headers["content-disposition"]).toBeUndefined();
    expect(refused.headers.etag).toBeUndefined();
    expect(refused.json().code).toBe("SERVICE_UNAVAILABLE");

    await sql
      .raw("drop trigger refuse_call_entries" + (dialect() === "sqlite" ? "" : " on audit_entries"))
      .execute(db());
    const answered = await h.call("GET", `/v1/media/${media.id}/download`);
    expect(answered.statusCode).toBe(200);
    expect(answered.body).toBe("confidential contents\n");
  });

  it("keeps the answer of a change that committed with its own entry", async () => {
    await refuseCallEntries("/v1/request/");
    const created = await h.call("POST", "/v1/request/", {
      type: "push",
      is_draft: true,
      contact: [],
      message: "Created while call entries fail",
    });
    expect(created.statusCode).toBe(201);
    const id = created.json().id as number;

    const stored = await db()
      .selectFrom("requests")
      .select("message")
      .where("id", "=", id)
      .executeTakeFirst();
    expect(stored?.message).toBe("Created while call entries fail");
    const entry = await db()
      .selectFrom("audit_entries")
      .select("code")
      .where("code", "=", "ABA-0010")
      .where("related_model", "=", "request")
      .where("relation_key", "=", String(id))
      .executeTakeFirst();
    expect(entry?.code).toBe("ABA-0010");
  });
});

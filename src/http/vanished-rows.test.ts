import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { buildRequester, buildTemplate } from "../../test/helpers/factories.js";
import { useHarness } from "../../test/helpers/harness.js";

/**
 * A row that vanishes between the read of an update and its UPDATE (a delete committed in between)
 * is 404. A trigger that drops the UPDATE of rows marked "Vanish" stands in for that delete: the
 * UPDATE ... RETURNING finds no row, exactly as after a concurrent delete, on either database.
 */
describe("updates racing deletes", () => {
  const h = useHarness();

  async function vanishOnUpdate(table: string, column: string): Promise<void> {
    const { db, dialect } = h.t.ferry.database;
    const name = `vanish_${table}`;
    if (dialect === "sqlite") {
      await sql
        .raw(
          `CREATE TRIGGER ${name} BEFORE UPDATE ON ${table} WHEN NEW.${column} = 'Vanish' BEGIN SELECT RAISE(IGNORE); END`,
        )
        .execute(db);
    } else {
      await sql
        .raw(
          `CREATE OR REPLACE FUNCTION ferry_test_skip() RETURNS trigger AS $$ BEGIN RETURN NULL; END $$ LANGUAGE plpgsql`,
        )
        .execute(db);
      await sql
        .raw(
          `CREATE TRIGGER ${name} BEFORE UPDATE ON ${table} FOR EACH ROW WHEN (NEW.${column} = 'Vanish') EXECUTE FUNCTION ferry_test_skip()`,
        )
        .execute(db);
    }
  }

  it("answers 404 for a requester deleted while it is updated", async () => {
    await vanishOnUpdate("requesters", "first_name");
    const requester = await buildRequester(h.t, h.owner);
    for (const method of ["PATCH", "PUT"]) {
      const res = await h.call(method, `/v1/requester/${requester.id}/`, {
        first_name: "Vanish",
        last_name: "Smith",
        email: "vanish@example.com",
      });
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json()).toEqual({ code: "RESOURCE_NOT_FOUND", detail: "Requester not found." });
    }
  });

  it("answers 404 for an email template deleted while it is updated", async () => {
    await vanishOnUpdate("email_templates", "subject");
    const template = await buildTemplate(h.t, h.owner);
    const res = await h.call("PATCH", `/v1/email_template/${template.slug}/`, { subject: "Vanish" });
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json()).toEqual({ code: "RESOURCE_NOT_FOUND", detail: "Email template not found." });
  });
});

import { beforeAll, describe, expect, it } from "vitest";
import { expectJson, type Json } from "../../../test/helpers/api.js";
import { addRecipient, buildContainer } from "../../../test/helpers/containers.js";
import { useHarness } from "../../../test/helpers/harness.js";

// Every statement the app runs; a test reads those of one call.
const statements: string[] = [];
const h = useHarness({ app: { onQuery: (sql) => statements.push(sql) } });

/** Statements of the call that read what it answers (not the application check nor the audit entry). */
async function statementsOf(call: () => Promise<unknown>): Promise<string[]> {
  statements.length = 0;
  await call();
  return statements.filter((s) => !/^(begin|commit|rollback)\b|audit_|"applications"/i.test(s));
}

const LIST = "/v1/module_container/container/";
let containers: Json[] = [];

beforeAll(async () => {
  for (let i = 0; i < 12; i++)
    containers.push(await buildContainer(h.call, { page_type: i % 2 ? "p2" : "pushpull" }));
  containers = containers.reverse();
});

describe("reading container pages", () => {
  it("reads a page as its count, its ids, their rows, then their shared rows: four statements", async () => {
    for (const [page, expected] of [
      ["1", containers.slice(0, 5)],
      ["3", containers.slice(10)],
    ] as const) {
      let body: Json = {};
      const seen = await statementsOf(async () => {
        body = expectJson(await h.call("GET", LIST, undefined, { query: { page, page_size: "5" } }), 200);
      });
      expect(seen).toHaveLength(4);
      expect(seen[0]).toMatch(/from "list_counts"/);
      expect(seen[1]).toMatch(/^select "containers"\."id" from "containers"/);
      expect(seen[2]).toMatch(/^select \* from "containers" where .*"id" in \(/);
      expect(seen[3]).toMatch(/^select \* from "requests" where .*"id" in \(/);
      expect(body.count).toBe(12);
      expect(body.results).toEqual(expected.map((c) => expectJsonLike(c)));
    }
  });

  it("shows each container as GET by id does", async () => {
    const body = expectJson(await h.call("GET", LIST, undefined, { query: { page_size: "12" } }), 200);
    for (const listed of body.results as Json[]) {
      expect(listed).toEqual(expectJson(await h.call("GET", `${LIST}${listed.id}/`), 200));
    }
  });

  it("filters by recipient with a count of that recipient's container", async () => {
    const target = containers[4]!;
    const recipient = await addRecipient(h.call, target.id as number);
    let body: Json = {};
    const seen = await statementsOf(async () => {
      body = expectJson(
        await h.call("GET", LIST, undefined, { query: { recipient: String(recipient.id) } }),
        200,
      );
    });
    expect(seen).toHaveLength(4);
    expect(seen[0]).toMatch(/count\(\*\)/);
    expect(body.count).toBe(1);
    expect((body.results as Json[]).map((c) => c.id)).toEqual([target.id]);
  });
});

/** A container as created, in the fields a list shows unchanged since (`updated` may move). */
function expectJsonLike(c: Json): Json {
  return { ...c, updated: expect.any(String) };
}

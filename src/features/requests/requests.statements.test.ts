import { mkdirSync, writeFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { expectJson, type Json } from "../../../test/helpers/api.js";
import {
  buildMedia,
  buildPushRequest,
  buildRequest,
  buildRequester,
  inlineContact,
} from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";

// Every statement the app runs; a test reads those of one call.
const statements: string[] = [];
const h = useHarness({ app: { onQuery: (sql) => statements.push(sql) } });

/**
 * Statements of the call that read what it answers: not the application check (cached, or one
 * read on PostgreSQL without Redis) nor the audit entry's transaction.
 */
async function statementsOf(call: () => Promise<unknown>): Promise<string[]> {
  statements.length = 0;
  await call();
  return statements.filter((s) => !/^(begin|commit|rollback)\b|audit_|"applications"/i.test(s));
}

let pull: Json;
let push: Json;

beforeAll(async () => {
  await h.call("PUT", "/v1/branding/", { recipient_host: "files.example.test" });
  const requester = await buildRequester(h.t, h.owner);
  pull = await buildRequest(h.t, h.owner, {
    requester: requester.id,
    contact: [
      inlineContact(
        [
          ["email", "jane@example.com"],
          ["sms", "+447700900456"],
        ],
        { first_name: "Jane" },
      ),
      inlineContact([["email", "max@example.com"]], { first_name: "Max", last_name: "Roe" }),
    ],
  });
  push = await buildPushRequest(h.t, h.owner, { contact: [inlineContact()] });
  await buildMedia(h.t, h.owner, { request: push.id, name: "a.txt" });
  await buildMedia(h.t, h.owner, { request: push.id, name: "b.txt" });
  for (let i = 0; i < 3; i++) await buildRequest(h.t, h.owner, { message: `Request ${i}` });
});

describe("reading requests", () => {
  it("reads a request with its contacts, methods, requester and media in one statement", async () => {
    for (const request of [pull, push]) {
      let body: Json = {};
      const seen = await statementsOf(async () => {
        body = expectJson(await h.call("GET", `/v1/request/${request.id}/`), 200);
      });
      expect(seen).toHaveLength(1);
      expect(body.id).toBe(request.id);
    }
    const shown = expectJson(await h.call("GET", `/v1/request/${pull.id}/`), 200);
    expect(shown.contact.map((c: Json) => [c.first_name, c.contactmethod.length])).toEqual([
      ["Jane", 2],
      ["Max", 1],
    ]);
    expect(shown.requester.first_name).toBe("Sam");
    expect(shown.short_message).toContain("://files.example.test/r/");
    const withMedia = expectJson(await h.call("GET", `/v1/request/${push.id}/`), 200);
    expect(withMedia.media.map((m: Json) => m.name)).toEqual(["a.txt", "b.txt"]);
  });

  it("reads a page as its count, its ids, then their relations: three statements", async () => {
    let body: Json = {};
    const seen = await statementsOf(async () => {
      body = expectJson(await h.call("GET", "/v1/request/?page_size=10"), 200);
    });
    expect(seen).toHaveLength(3);
    expect(seen[0]).toMatch(/from "list_counts"/);
    expect(seen[1]).toMatch(/^select "id" from "requests"/);
    expect(seen[2]).toMatch(/"id" in \(/);
    expect(body.count).toBe(5);
    expect(body.results).toHaveLength(5);
    // The page shows each request as GET by id does.
    for (const listed of body.results as Json[]) {
      const single = expectJson(await h.call("GET", `/v1/request/${listed.id}/`), 200);
      expect(listed).toEqual(single);
    }
    if (process.env.FERRY_DUMP_RESPONSES) {
      // Kept for comparing the bodies of two versions of the code (identifiers vary per run).
      mkdirSync("test-results", { recursive: true });
      const pages = JSON.stringify(body).replace(/"identifier":"[^"]+"|\/r\/[^/"]+\/|media\/[^/"]+\//g, "ID");
      writeFileSync(process.env.FERRY_DUMP_RESPONSES, pages);
    }
  });
});

import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import openapiTS from "openapi-typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useHarness } from "../../test/helpers/harness.js";
import { deref, operationsOf } from "../../test/helpers/openapi.js";
import { errorStatus } from "../shared/errors.js";

const run = promisify(execFile);
type Json = Record<string, unknown>;

describe("the OpenAPI document", () => {
  const h = useHarness();
  let doc: Json;
  beforeAll(async () => {
    const res = await h.t.app.inject({ method: "GET", url: "/v1/openapi.json" });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  const schemaOf = (path: string, method: string, status: string, type = "application/json") => {
    const op = (doc.paths as Record<string, Record<string, Json>>)[path]?.[method] as Json;
    const response = (op.responses as Record<string, Json>)[status] as { content: Record<string, Json> };
    return response.content[type]?.schema;
  };

  it("gives every operation a unique camelCase operationId, tags and a security statement", () => {
    const ops = operationsOf(doc);
    expect(ops.length).toBeGreaterThan(100);
    const ids = ops.map(({ op }) => op.operationId);
    for (const { method, path, op } of ops) {
      expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z0-9]+$/);
      expect(op.tags, `${method} ${path}`).toEqual([expect.any(String)]);
      expect(Array.isArray(op.security), `${method} ${path}`).toBe(true);
    }
    expect(new Set(ids).size).toBe(ids.length);
    const byId = Object.fromEntries(ops.map(({ method, path, op }) => [op.operationId, `${method} ${path}`]));
    expect(byId).toMatchObject({
      createRequest: "post /v1/request/",
      getRequest: "get /v1/request/{id}/",
      listMedia: "get /v1/media/",
      uploadMediaChunk: "put /v1/media/{id}/",
      downloadMedia: "get /v1/media/{id}/download",
      createContainer: "post /v1/module_container/container/",
      sendContainerNotification: "post /v1/module_container/container/{id}/send_notification/",
    });
  });

  it("marks public operations with an empty security list and the rest with JWT", () => {
    const ops = Object.fromEntries(operationsOf(doc).map(({ op }) => [op.operationId, op.security]));
    for (const id of ["getToken", "refreshToken", "verifyToken", "trackEmailOpen", "getRecipientPage"]) {
      expect(ops[id], id).toEqual([]);
    }
    for (const id of ["createRequest", "downloadMedia", "getAccount", "searchAuditLog"]) {
      expect(ops[id], id).toEqual([{ JWT: [] }]);
    }
  });

  it("names resource and error schemas and refers to them", () => {
    const schemas = (doc.components as { schemas: Json }).schemas;
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining([
        "Request",
        "Media",
        "Container",
        "Contact",
        "Requester",
        "Error",
        "ValidationError",
      ]),
    );
    expect(schemaOf("/v1/request/{id}/", "get", "200")).toEqual({ $ref: "#/components/schemas/Request" });
    expect(schemaOf("/v1/request/{id}/", "get", "404")).toEqual({ $ref: "#/components/schemas/Error" });
    const error = schemas.Error as { properties: { code: { enum: string[] } } };
    expect(error.properties.code.enum).toEqual(Object.keys(errorStatus));
    expect(error.properties.code.enum).toEqual(expect.arrayContaining(["GONE", "CONFLICT"]));
  });

  it("types integer path ids as integers", () => {
    const params = (doc.paths as Record<string, Record<string, { parameters: Json[] }>>)["/v1/request/{id}/"]
      ?.get?.parameters;
    expect(params).toContainEqual(
      expect.objectContaining({ in: "path", name: "id", schema: { type: "integer", minimum: 1 } }),
    );
  });

  it("states closed sets as enums, what is always present as required, what may be left out as optional", () => {
    const request = deref(doc, schemaOf("/v1/request/{id}/", "get", "200")) as {
      required: string[];
      properties: Record<string, { enum?: unknown[] }>;
    };
    expect(request.required).toContain("media");
    expect(request.properties.tfa_send_to?.enum).toEqual(["email", "sms", null]);
    expect(request.properties.callback_status?.enum).toEqual([
      "pending",
      "delivered",
      "failed",
      "stopped",
      null,
    ]);
    const upload = (doc.paths as Record<string, Record<string, Json>>)["/v1/media/"]?.post as {
      requestBody: { content: Record<string, { schema: Json }> };
    };
    const body = deref(doc, upload.requestBody.content["multipart/form-data"]?.schema) as {
      required: string[];
    };
    expect(body.required).toEqual(["file"]);
  });

  it("documents downloads as bytes, not JSON", () => {
    for (const status of ["200", "206"]) {
      expect(schemaOf("/v1/media/{id}/download", "get", status, "application/octet-stream")).toEqual({
        type: "string",
        format: "binary",
      });
      expect(schemaOf("/v1/media/{id}/download", "get", status, "application/json")).toBeUndefined();
    }
    expect(schemaOf("/v1/media/{id}/download", "get", "404")).toEqual({ $ref: "#/components/schemas/Error" });
  });
});

describe("a client generated from the OpenAPI document", () => {
  const h = useHarness();
  const dir = mkdtempSync(join(tmpdir(), "ferry-client-"));
  const tsc = resolve("node_modules/.bin/tsc");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  beforeAll(async () => {
    const doc = (await h.t.app.inject({ method: "GET", url: "/v1/openapi.json" })).json();
    writeFileSync(join(dir, "api.d.ts"), await openapiTS(doc));
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, module: "nodenext", target: "ES2022", types: [] },
        include: ["*.ts"],
      }),
    );
  });

  const compile = async (client: string) => {
    writeFileSync(join(dir, "client.ts"), client);
    try {
      await run(tsc, ["-p", dir]);
      return { ok: true, output: "" };
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      return { ok: false, output: `${e.stdout ?? ""}${e.stderr ?? ""}` };
    }
  };

  const client = (extra = "") => `
import type { components, operations } from "./api.js";

type Request = components["schemas"]["Request"];
type Media = components["schemas"]["RequestMedia"];
type ApiError = components["schemas"]["Error"];
type Created = operations["createRequest"]["responses"]["201"]["content"]["application/json"];
type Body = NonNullable<operations["createRequest"]["requestBody"]>["content"]["application/json"];

export function firstFile(request: Request): string | undefined {
  const media: Media[] = request.media;
  return media[0]?.name;
}
export function isGone(error: ApiError): boolean {
  return error.code === "GONE";
}
export function channel(created: Created): "email" | "sms" | null | undefined {
  return created.tfa_send_to;
}
export const body: Body = { type: "push", message: "Your contract", is_draft: true };
${extra}
`;

  it("compiles against the named types and operations", async () => {
    const result = await compile(client());
    expect(result.output).toBe("");
    expect(result.ok).toBe(true);
  });

  it("refuses a field the document does not have", async () => {
    const result = await compile(client(`export const wrong = (r: Request): string => r.no_such_field;`));
    expect(result.ok).toBe(false);
    expect(result.output).toContain("no_such_field");
  });

  it("refuses an error code outside the documented list", async () => {
    const result = await compile(client(`export const bad: ApiError["code"] = "TEAPOT";`));
    expect(result.ok).toBe(false);
    expect(result.output).toContain("TEAPOT");
  });
});

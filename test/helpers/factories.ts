/**
 * Factories for the entities tests make, through the public API: each takes the test app, the
 * calling account and overrides (merged over sensible defaults; an `undefined` override leaves the
 * field out), fails the test with the response body when the create is refused, and returns the
 * created object's JSON.
 */
import { callApi, expectJson, type Json } from "./api.js";
import type { TestAccount, TestApp } from "./app.js";
import { multipart } from "./media.js";

/** A contact method as `[interface_class, value]`, e.g. `["email", "jane@example.com"]`. */
export type MethodSpec = [string, string];

/** A contact body for POST /v1/contact/ or a request's `contact` list: Jane Doe with `methods`. */
export function inlineContact(
  methods: MethodSpec[] = [["email", "jane@example.com"]],
  names: Json = {},
): Json {
  return {
    first_name: "Jane",
    last_name: "Doe",
    ...names,
    contactmethod: methods.map(([interface_class, value]) => ({ interface_class, value })),
  };
}

/** POST /v1/contact/: Jane Doe with one email method by default. */
export async function buildContact(t: TestApp, who: TestAccount, overrides: Json = {}): Promise<Json> {
  return expectJson(await callApi(t, who, "POST", "/v1/contact/", { ...inlineContact(), ...overrides }), 201);
}

/** POST /v1/requester/: Sam Lee with an email by default. */
export async function buildRequester(t: TestApp, who: TestAccount, overrides: Json = {}): Promise<Json> {
  const body = { first_name: "Sam", last_name: "Lee", email: "sam.lee@example.com", ...overrides };
  return expectJson(await callApi(t, who, "POST", "/v1/requester/", body), 201);
}

/** POST /v1/request/: a sent pull request with a message and one inline contact (Jane Doe, email) by default. */
export async function buildRequest(t: TestApp, who: TestAccount, overrides: Json = {}): Promise<Json> {
  const body = {
    type: "pull",
    message: "Please upload your passport.",
    contact: [inlineContact()],
    ...overrides,
  };
  return expectJson(await callApi(t, who, "POST", "/v1/request/", body), 201);
}

/** POST /v1/request/: a draft push request without contacts by default, ready to take files. */
export function buildPushRequest(t: TestApp, who: TestAccount, overrides: Json = {}): Promise<Json> {
  return buildRequest(t, who, {
    type: "push",
    is_draft: true,
    contact: [],
    message: "Your files",
    ...overrides,
  });
}

/** PATCH /v1/request/{id}/ with `is_draft: false` (and `fields`): sends a draft; returns the Request. */
export async function sendDraft(
  t: TestApp,
  who: TestAccount,
  requestId: number,
  fields: Json = {},
): Promise<Json> {
  const res = await callApi(t, who, "PATCH", `/v1/request/${requestId}/`, { is_draft: false, ...fields });
  return expectJson(res, 200);
}

/** What buildMedia uploads: the upload's fields and the file's bytes. */
export interface MediaOverrides {
  /** The request to upload into (default: a new draft push request of `who`). */
  request?: number;
  name?: string;
  content_type?: string;
  /** The file's bytes (default: a short text). */
  data?: Buffer | string;
}

/** POST /v1/media/: uploads a small file whole (multipart) into a draft push request; returns the Media. */
export async function buildMedia(
  t: TestApp,
  who: TestAccount,
  overrides: MediaOverrides = {},
): Promise<Json> {
  const request = overrides.request ?? (await buildPushRequest(t, who)).id;
  const name = overrides.name ?? "notes.txt";
  const type = overrides.content_type ?? "text/plain";
  const data = Buffer.from(overrides.data ?? "a small file\n");
  const body = multipart({ request, name, content_type: type }, { data, filename: name, type });
  const res = await callApi(t, who, "POST", "/v1/media/", body.payload, {
    contentType: body.headers["content-type"],
  });
  return expectJson(res, 201);
}

let templates = 0;

/** POST /v1/email_template/: a template with a slug unique in the test file by default. */
export async function buildTemplate(t: TestApp, who: TestAccount, overrides: Json = {}): Promise<Json> {
  const body = {
    slug: `template-${++templates}`,
    subject: "Files",
    html: "<p>{{ message }}</p>",
    ...overrides,
  };
  return expectJson(await callApi(t, who, "POST", "/v1/email_template/", body), 201);
}

/** PUT /v1/settings/smtp/: the account's own SMTP server (127.0.0.1:25, plain) by default; returns the settings. */
export async function buildSmtpSettings(t: TestApp, who: TestAccount, overrides: Json = {}): Promise<Json> {
  const body = { host: "127.0.0.1", port: 25, tls: "none", from_email: "files@acme.example", ...overrides };
  return expectJson(await callApi(t, who, "PUT", "/v1/settings/smtp/", body), 200);
}

/**
 * POST /v1/sandbox/request/{id}/complete/: completes a sent pull request as its recipient would
 * (sandbox deployments only), with `receiver_message` when given; returns the Request.
 */
export async function completeRequest(
  t: TestApp,
  who: TestAccount,
  requestId: number,
  receiverMessage?: string,
): Promise<Json> {
  const body = receiverMessage === undefined ? {} : { receiver_message: receiverMessage };
  return expectJson(await callApi(t, who, "POST", `/v1/sandbox/request/${requestId}/complete/`, body), 200);
}

/**
 * A tiny enrichment kind for tests of the frame, registered only in tests: `testkind`, with the
 * `local` provider and `testvendor`, a fake vendor in this process whose webhooks are signed like
 * Stripe's (`X-Test-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">` with the connection's
 * webhook secret) and whose step status tests set directly (the reconciliation fallback).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { Type } from "typebox";
import {
  type EnrichmentProvider,
  ProviderError,
  type ProviderSettings,
} from "../../src/adapters/enrichment-provider/enrichment-provider.js";
import type { EnrichmentKind } from "../../src/features/enrichments/index.js";

/** The fake vendor's state: step status by reference, and the steps it started. */
export const testVendor = {
  statuses: new Map<string, { status: string; final: boolean; result?: Record<string, unknown> }>(),
  started: [] as { ref: string; returnUrl: string; apiKey: unknown }[],
  canceled: [] as string[],
};

/** The disclosure the test kind asks the recipient to accept before starting. */
export const TEST_DISCLOSURE = { id: "test-consent", version: "2026-01", text: "I agree to the test terms." };

/** Signs a webhook body as the fake vendor does. */
export function signTestWebhook(secret: string, body: string, at = Math.floor(Date.now() / 1000)): string {
  return `t=${at},v1=${createHmac("sha256", secret).update(`${at}.${body}`).digest("hex")}`;
}

function testVendorProvider(settings: ProviderSettings): EnrichmentProvider {
  return {
    id: "testvendor",
    async start(input) {
      const ref = `tv_${input.featureId}`;
      testVendor.started.push({ ref, returnUrl: input.returnUrl, apiKey: settings.credentials.api_key });
      testVendor.statuses.set(ref, { status: "started", final: false });
      return { ref, next: { type: "redirect", url: `https://vendor.example/flow/${ref}` } };
    },
    async status(ref) {
      const known = testVendor.statuses.get(ref);
      if (!known) throw new ProviderError("not_found", "unknown step", "testvendor");
      return known;
    },
    async cancel(ref) {
      testVendor.canceled.push(ref);
    },
    verifyWebhook(raw) {
      const header = raw.headers["x-test-signature"] ?? "";
      const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
      if (!match) throw new ProviderError("auth_failed", "missing signature", "testvendor");
      const expected = createHmac("sha256", settings.webhookSecret)
        .update(`${match[1]}.${raw.body.toString("utf8")}`)
        .digest();
      const given = Buffer.from(match[2]!, "hex");
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        throw new ProviderError("auth_failed", "bad signature", "testvendor");
      const event = JSON.parse(raw.body.toString("utf8")) as {
        id: string;
        ref: string;
        status: string;
        result?: Record<string, unknown>;
      };
      return [
        {
          eventId: event.id,
          ref: event.ref,
          outcome: { status: event.status, final: event.status === "done", result: event.result },
        },
      ];
    },
  };
}

function localProvider(): EnrichmentProvider {
  return {
    id: "local",
    async start(input) {
      return { ref: `local_${input.featureId}`, next: { type: "none" } };
    },
    async status() {
      return { status: "pending", final: false };
    },
    async cancel() {},
    verifyWebhook() {
      throw new ProviderError("auth_failed", "no webhooks", "local");
    },
  };
}

/** The test kind's descriptor. */
export const testKind: EnrichmentKind<{ note: string }> = {
  name: "testkind",
  module: "testkind",
  resource: "testkind",
  schemaName: "TestKind",
  summary: "A step for tests",
  statuses: ["pending", "started", "done", "failed", "expired"],
  initialStatus: "pending",
  finalStatuses: ["done", "failed"],
  expiredStatus: "expired",
  createFields: { note: Type.Optional(Type.String({ maxLength: 50 })) },
  presentedFields: { note: Type.String(), has_result: Type.Boolean() },
  readPayload: (body, ctx) => ({
    note: typeof body.note === "string" ? body.note : String(ctx.current?.note ?? ""),
  }),
  present: (view) => ({ note: view.payload.note, has_result: view.result !== null }),
  sensitiveResult: true,
  retentionDays: () => 1,
  providers: {
    local: { id: "local", credentials: {}, load: async () => localProvider },
    testvendor: {
      id: "testvendor",
      credentials: { api_key: Type.String({ minLength: 3 }) },
      load: async () => testVendorProvider,
    },
  },
  session: {
    summary: (view) => `Status: ${view.status}`,
    actionLabel: () => "Start the test step",
    render: (ctx) => (
      <form method="post" action={`${ctx.stepBase}act`}>
        <input type="hidden" name="csrf_token" value={ctx.csrf} />
        <p>{TEST_DISCLOSURE.text}</p>
        <button type="submit" name="accept" value="1">
          Accept and start
        </button>
      </form>
    ),
    formActionOrigins: () => ["https://vendor.example"],
    async act(_ctx, form, services) {
      if (form.accept !== "1") return { error: "Accept the terms first.", status: 400 };
      if (!(await services.hasConsent(TEST_DISCLOSURE))) await services.recordConsent(TEST_DISCLOSURE);
      const next = await services.start();
      await services.setStatus("started");
      return next.type === "redirect" ? { redirect: next.url } : { back: true };
    },
  },
};

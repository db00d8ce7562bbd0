import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { generateWebhookSecret, signWebhook } from "./webhook-signature.js";

// verify() checks the timestamp against the real clock (5 minute tolerance), so these use "now".
const nowSeconds = (): number => Math.floor(Date.now() / 1000);

function headersFor(signature: string, msgId: string, timestamp: number): Record<string, string> {
  return { "webhook-id": msgId, "webhook-timestamp": String(timestamp), "webhook-signature": signature };
}

describe("generateWebhookSecret", () => {
  it("returns whsec_ followed by base64 of 32 random bytes", () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(secret.slice("whsec_".length), "base64")).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(secret);
  });
});

describe("signWebhook", () => {
  const body = JSON.stringify({ type: "request_complete", request: { id: 42, complete: true } });

  it("matches the published Standard Webhooks example and the reference library's sign()", () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const msgId = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const payload = '{"test": 2432232314}';
    const ours = signWebhook([secret], msgId, 1614265330, payload);
    expect(ours).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    expect(ours).toBe(new Webhook(secret).sign(msgId, new Date(1614265330 * 1000), payload));
  });

  it("produces a header the standardwebhooks verifier accepts", () => {
    const secret = generateWebhookSecret();
    const msgId = "msg_2YHm7bq3Lx";
    const timestamp = nowSeconds();
    const headers = headersFor(signWebhook([secret], msgId, timestamp, body), msgId, timestamp);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it("signs non-ASCII bodies as UTF-8", () => {
    const secret = generateWebhookSecret();
    const text = JSON.stringify({ message: "Grüße, 東京 ✓" });
    const timestamp = nowSeconds();
    const headers = headersFor(signWebhook([secret], "msg_utf8", timestamp, text), "msg_utf8", timestamp);
    expect(new Webhook(secret).verify(text, headers)).toEqual(JSON.parse(text));
  });

  it("during rotation carries one signature per secret, each verifiable on its own", () => {
    const oldSecret = generateWebhookSecret();
    const newSecret = generateWebhookSecret();
    const msgId = "msg_rotation";
    const timestamp = nowSeconds();
    const signature = signWebhook([newSecret, oldSecret], msgId, timestamp, body);

    expect(signature.split(" ")).toHaveLength(2);
    expect(signature.split(" ")[0]).toBe(signWebhook([newSecret], msgId, timestamp, body));
    expect(signature.split(" ")[1]).toBe(signWebhook([oldSecret], msgId, timestamp, body));
    const headers = headersFor(signature, msgId, timestamp);
    expect(new Webhook(oldSecret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(newSecret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow(
      WebhookVerificationError,
    );
  });

  it("fails verification when the body, id or timestamp was changed", () => {
    const secret = generateWebhookSecret();
    const msgId = "msg_tamper";
    const timestamp = nowSeconds();
    const signature = signWebhook([secret], msgId, timestamp, body);
    const verifier = new Webhook(secret);

    const tamperedBody = body.replace("42", "43");
    expect(() => verifier.verify(tamperedBody, headersFor(signature, msgId, timestamp))).toThrow(
      WebhookVerificationError,
    );
    expect(() => verifier.verify(body, headersFor(signature, "msg_other", timestamp))).toThrow(
      WebhookVerificationError,
    );
    expect(() => verifier.verify(body, headersFor(signature, msgId, timestamp - 1))).toThrow(
      WebhookVerificationError,
    );
  });

  it("rejects malformed input without echoing the secret", () => {
    expect(() => signWebhook([], "msg", 1, body)).toThrow(TypeError);
    expect(() => signWebhook([generateWebhookSecret()], "msg", 1.5, body)).toThrow(TypeError);
    expect(() => signWebhook([generateWebhookSecret()], "msg", -1, body)).toThrow(TypeError);
    for (const bad of ["plainsecretwithoutprefix", "whsec_", "whsec_c2hvcnQ=", "whsec_not base64!"]) {
      expect(() => signWebhook([bad], "msg", 1, body)).toThrow(TypeError);
      try {
        signWebhook([bad], "msg", 1, body);
      } catch (error) {
        expect((error as Error).message).not.toContain(bad);
      }
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSmsProvider, type TestSmsProvider } from "../../../test/helpers/sms-provider.js";
import type { CapturedMessage } from "../mailer/capture-sink.js";
import { DeliveryError } from "../mailer/mailer.js";
import { CaptureSmsSender } from "./capture-sms-sender.js";
import type { SmsSender } from "./sms-sender.js";
import { TwilioSmsSender } from "./twilio-sms-sender.js";

interface Harness {
  sender: SmsSender;
  received(): { to: string; body: string }[];
  close(): Promise<void>;
}

const implementations: [string, () => Promise<Harness>][] = [
  [
    "capture",
    async () => {
      const stored: CapturedMessage[] = [];
      return {
        sender: new CaptureSmsSender({ capture: async (m) => stored.push(m) }, "+15005550006"),
        received: () => stored.map((m) => ({ to: m.to, body: m.text })),
        close: async () => {},
      };
    },
  ],
  [
    "twilio",
    async () => {
      const provider = await startSmsProvider();
      return {
        sender: new TwilioSmsSender({
          baseUrl: provider.baseUrl,
          accountSid: "AC1",
          authToken: "t",
          messagingServiceSid: "MG1",
        }),
        received: () => provider.received.map((r) => ({ to: r.form.To ?? "", body: r.form.Body ?? "" })),
        close: () => provider.close(),
      };
    },
  ],
];

describe.each(implementations)("SMS sender contract: %s", (_name, make) => {
  let h: Harness;
  beforeAll(async () => {
    h = await make();
  });
  afterAll(async () => h?.close());

  it("delivers the destination and text unchanged", async () => {
    const body = "Files from Acme ✓ https://ferry.test/r/abc/";
    const result = await h.sender.send({ to: "+447700900123", body }, { accountId: 1 });
    expect(result.messageId).not.toBe("");
    expect(h.received()).toEqual([{ to: "+447700900123", body }]);
  });
});

describe("Twilio sender failures", () => {
  let provider: TestSmsProvider;
  beforeAll(async () => {
    provider = await startSmsProvider();
  });
  afterAll(async () => provider?.close());

  it("uses the messaging service when set, and maps unreachable providers to transient errors", async () => {
    const sender = new TwilioSmsSender({
      baseUrl: provider.baseUrl,
      accountSid: "AC1",
      authToken: "t",
      from: "+15005550006",
      messagingServiceSid: "MG1",
    });
    await sender.send({ to: "+15005550009", body: "x" });
    expect(provider.received[0]!.form).toEqual({ To: "+15005550009", Body: "x", MessagingServiceSid: "MG1" });
    const down = new TwilioSmsSender({
      baseUrl: "http://127.0.0.1:9",
      accountSid: "AC1",
      authToken: "t",
      from: "+1",
    });
    const err = await down.send({ to: "+15005550009", body: "x" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeliveryError);
    expect(err).toMatchObject({ permanent: false });
  });
});

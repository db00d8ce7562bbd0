import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { eventually } from "../../../test/helpers/process.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../../test/helpers/webhook-receiver.js";
import { buildWorker } from "../../app/build-worker.js";
import type { Worker } from "../../jobs/worker.js";

// FERRY_ALLOW_PRIVATE_CALLBACKS stays at its default (false) in this file.
describe("callbacks: outbound safety (SSRF)", () => {
  let t: TestApp;
  let owner: TestAccount;
  let worker: Worker;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await createTestApp({ JOB_POLL_INTERVAL_MS: "20" });
    owner = await createTestAccount(t);
    receiver = await startWebhookReceiver();
    worker = buildWorker(t.container);
    await worker.start();
  });
  afterAll(async () => {
    await worker?.stop(1000);
    await receiver?.close();
    await t?.close();
  });

  it("refuses every non-public destination, records the refusal and sends nothing", async () => {
    const port = receiver.port;
    const urls = [
      `http://localhost:${port}/hook`, // a host name that resolves to 127.0.0.1
      `http://127.0.0.1:${port}/hook`, // loopback
      `http://[::ffff:127.0.0.1]:${port}/hook`, // IPv4-mapped IPv6
      `http://[::1]:${port}/hook`, // IPv6 loopback
      "http://10.1.2.3/hook", // private
      "http://172.16.5.4/hook", // private
      "http://192.168.1.1/hook", // private
      "http://169.254.169.254/latest/meta-data/", // link-local, cloud metadata
      "http://100.64.0.1/hook", // CGNAT
      "http://224.0.0.1/hook", // multicast
      "http://0.0.0.0/hook", // unspecified
      "http://[fd00::1]/hook", // unique-local IPv6
      "http://[fe80::1]/hook", // link-local IPv6
    ];
    const ids: number[] = [];
    for (const url of urls) {
      const res = await t.app.inject({
        method: "POST",
        url: "/v1/request/",
        headers: owner.headers,
        payload: { type: "pull", callback_url: url },
      });
      expect(res.statusCode, url).toBe(201);
      ids.push(res.json().id);
      await t.container.lifecycle.completePullRequest(owner.accountId, res.json().id);
    }
    const list = async (status: string) =>
      (
        await t.app.inject({
          method: "GET",
          url: `/v1/callback/?status=${status}&page_size=100`,
          headers: owner.headers,
        })
      ).json();
    await eventually(async () => (await list("failed")).count === urls.length);
    const failed = (await list("failed")).results as { id: number; url: string }[];
    expect(failed.map((d) => d.url).sort()).toEqual([...urls].sort());
    for (const d of failed) {
      const detail = (
        await t.app.inject({ method: "GET", url: `/v1/callback/${d.id}/`, headers: owner.headers })
      ).json();
      expect(detail.tries, d.url).toBe(1);
      expect(detail.attempts, d.url).toEqual([
        expect.objectContaining({ outcome: "blocked", status_code: null, error: expect.any(String) }),
      ]);
      expect(detail.attempts[0].error).not.toMatch(/\d+\.\d+\.\d+\.\d+/);
    }
    expect(receiver.received).toHaveLength(0);
  });
});

import { describe, expect, it } from "vitest";
import { buildRequest, completeRequest } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { eventually } from "../../../test/helpers/process.js";

// FERRY_ALLOW_PRIVATE_CALLBACKS stays at its default (false) in this file.
describe("callbacks: outbound safety (SSRF)", () => {
  const h = useHarness({ env: { JOB_POLL_INTERVAL_MS: "20" }, worker: true, receiver: true });

  it("refuses every non-public destination, records the refusal and sends nothing", async () => {
    const { t, owner, receiver } = h;
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
      const { id } = await buildRequest(t, owner, { callback_url: url });
      ids.push(id);
      await completeRequest(t, owner, id);
    }
    const list = async (status: string) =>
      (await h.call("GET", "/v1/callback/", undefined, { query: { status, page_size: "100" } })).json();
    await eventually(async () => (await list("failed")).count === urls.length);
    const failed = (await list("failed")).results as { id: number; url: string }[];
    expect(failed.map((d) => d.url).sort()).toEqual([...urls].sort());
    for (const d of failed) {
      const detail = (await h.call("GET", `/v1/callback/${d.id}/`)).json();
      expect(detail.tries, d.url).toBe(1);
      expect(detail.attempts, d.url).toEqual([
        expect.objectContaining({ outcome: "blocked", status_code: null, error: expect.any(String) }),
      ]);
      expect(detail.attempts[0].error).not.toMatch(/\d+\.\d+\.\d+\.\d+/);
    }
    expect(receiver.received).toHaveLength(0);
  });
});

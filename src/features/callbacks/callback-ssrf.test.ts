import { describe, expect, it } from "vitest";
import { buildRequest, completeRequest } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { eventually } from "../../../test/helpers/process.js";

// FERRY_ALLOW_PRIVATE_CALLBACKS stays at its default (false) in this file.
describe("callbacks: outbound safety (SSRF)", () => {
  const h = useHarness({ env: { JOB_POLL_INTERVAL_MS: "20" }, worker: true, receiver: true });

  const privateUrls = (port: number) => [
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

  it("refuses a non-public callback URL when a request or container is saved, naming the setting", async () => {
    for (const url of privateUrls(h.receiver.port)) {
      const created = await h.call("POST", "/v1/request/", { type: "pull", callback_url: url });
      expect(created.statusCode, url).toBe(400);
      expect(created.json(), url).toEqual({
        callback_url: [expect.stringContaining("FERRY_ALLOW_PRIVATE_CALLBACKS=true")],
      });
      expect(created.json().callback_url[0], url).toMatch(/non-public address/);
    }
    const request = await buildRequest(h.t, h.owner);
    const patched = await h.call("PATCH", `/v1/request/${request.id}/`, {
      callback_url: `http://localhost:${h.receiver.port}/hook`,
    });
    expect(patched.statusCode).toBe(400);
    expect(patched.json().callback_url[0]).toContain("resolves to 127.0.0.1");
    const container = await h.call("POST", "/v1/module_container/container/", {
      page_type: "pushpull",
      callback_url: "http://10.1.2.3/hook",
    });
    expect(container.statusCode).toBe(400);
    expect(container.json().callback_url[0]).toContain("is 10.1.2.3");
    // A public address and a name that does not resolve yet are kept.
    for (const url of ["https://93.184.215.14/hook", "https://hooks.ferry-customer.invalid/x?y=1"]) {
      const ok = await h.call("POST", "/v1/request/", { type: "pull", callback_url: url });
      expect(ok.statusCode, url).toBe(201);
      expect(ok.json().callback_url).toBe(url);
    }
  });

  it("refuses every non-public destination at delivery, records the refusal and sends nothing", async () => {
    const { t, owner, receiver } = h;
    const urls = privateUrls(receiver.port);
    // Saved while the host names pointed elsewhere: deliveries check every address again.
    for (const url of urls) {
      const { id } = await buildRequest(t, owner, { callback_url: "https://hooks.ferry-customer.invalid/" });
      await t.ferry.database.db
        .updateTable("requests")
        .set({ callback_url: url })
        .where("id", "=", id)
        .execute();
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

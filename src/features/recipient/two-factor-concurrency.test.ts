/**
 * Recipient and session codes under concurrent guesses: forty codes at once (39 wrong, the right
 * one in the middle) on a `/r/` link and on a container session `/s/` check at most the allowed
 * number, the right one opens nothing once the limit is reached, and the link ends locked.
 */
import { describe, expect, it } from "vitest";
import { expectJson } from "../../../test/helpers/api.js";
import { addRecipient, buildContainer, sendContainer, sessionOf } from "../../../test/helpers/containers.js";
import { buildRequest } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { capturedCode, PageBrowser } from "../../../test/helpers/page-browser.js";

const LOCKED_OUT = "Too many wrong codes were entered, so this link is locked to protect it.";
/** TFA_MAX_FAILURES below: three wrong codes in a row lock the link. */
const MAX_FAILURES = 3;

describe("two-factor codes under concurrent guesses", () => {
  const h = useHarness({ env: { TFA_MAX_FAILURES: String(MAX_FAILURES) } });
  let phone = 15555553000;

  async function pullLink() {
    const to = `+${phone++}`;
    const req = await buildRequest(h.t, h.owner, { tfa_send_to: "sms", tfa_send_to_value: to });
    return { base: `/r/${req.identifier}/`, to };
  }

  async function codedSession() {
    const to = `+${phone++}`;
    const c = await buildContainer(h.call);
    const r = await addRecipient(h.call, c.id, { first_name: "Ana" });
    expectJson(
      await h.call("POST", `/v1/module_container/container/${c.id}/auth_code/`, { send_as: "sms", to }),
      201,
    );
    const s = sessionOf(await sendContainer(h.call, c.id), r);
    return { base: s.base, to };
  }

  /** Wrong codes: 39 six-digit codes other than `right`. */
  function wrongCodes(right: string): string[] {
    const out: string[] = [];
    for (let n = 123_457; out.length < 39; n += 7919) {
      const code = String(n % 1_000_000).padStart(6, "0");
      if (code !== right) out.push(code);
    }
    return out;
  }

  for (const kind of ["link", "session"] as const) {
    it(`checks at most the allowed codes of forty at once on a ${kind} and locks it`, async () => {
      const { base, to } = kind === "link" ? await pullLink() : await codedSession();
      const b = new PageBrowser(h.t, base);
      await b.get();
      expect((await b.post("tfa/send", {})).statusCode).toBe(303);
      const right = await capturedCode(h.t, h.owner, to);
      const wrong = wrongCodes(right);
      const codes = [...wrong.slice(0, 20), right, ...wrong.slice(20)];
      const answers = await Promise.all(codes.map((code) => b.post("tfa/verify", { code })));
      const opened = answers.filter((a) => String(a.headers["set-cookie"] ?? "").includes("ferry_tfa="));
      expect(opened).toHaveLength(0);
      const checked = answers.filter((a) => String(a.headers.location).includes("notice=wrong"));
      expect(checked.length).toBeLessThanOrEqual(MAX_FAILURES);
      expect(String(answers[20]!.headers.location)).toMatch(/notice=(locked|locked_out)$/);
      const page = await new PageBrowser(h.t, base).get();
      expect(page.body).toContain(LOCKED_OUT);
    });
  }
});

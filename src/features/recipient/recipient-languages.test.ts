import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { buildRequest } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";
import {
  notifiableRequest,
  runNotificationJobs,
  sendNotification,
} from "../../../test/helpers/notifications.js";
import { translator } from "../../shared/i18n/i18n.js";
import { Layout, renderDocument } from "../../web/layout.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON response bodies are read loosely in tests.
type Json = Record<string, any>;

describe("the reader's language on recipient pages", () => {
  const h = useHarness({ other: true });

  const page = (identifier: string, headers: Record<string, string> = {}, query = "") =>
    h.t.app.inject({ method: "GET", url: `/r/${identifier}/${query}`, headers });

  it("sets and validates the account's default language through /v1/account/", async () => {
    const before = await h.call("GET", "/v1/account/");
    expect(before.json()).toMatchObject({ default_language: "en" });
    const bad = await h.call("PATCH", "/v1/account/", { default_language: "xx" });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ default_language: ["Choose one of: en, es, fr, de, pt."] });
    const wrongType = await h.call("PATCH", "/v1/account/", { default_language: 3 });
    expect(wrongType.statusCode).toBe(400);
    const other = await h.call("GET", "/v1/account/", undefined, h.other);
    expect(other.json().default_language).toBe("en");
  });

  it("writes the pull page in the browser's language, with lang, dir and the page scripts' messages", async () => {
    const req = await buildRequest(h.t, h.owner, { message: "Hola" });
    const res = await page(req.identifier, { "accept-language": "es-ES,es;q=0.9,en;q=0.5" });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<html lang="es" dir="ltr">');
    expect(res.body).toContain("Sus archivos");
    expect(res.body).toContain("Arrastre y suelte los archivos aquí, o elíjalos:");
    expect(res.body).toContain("Enviar sin archivos");
    expect(res.body).not.toContain("Your files");
    const block = /<script type="application\/json" id="fy-i18n">([^<]*)<\/script>/.exec(res.body);
    expect(block).not.toBeNull();
    const data = JSON.parse(block![1]!) as Json;
    expect(data.locale).toBe("es");
    expect(data.format).toBe("es-ES");
    expect(data.messages["client.allDone"]).toBe("Todas las subidas han terminado. Ya puede enviar.");
    expect(data.messages["pull.title"]).toBeUndefined();
    // Every language is offered, each in its own words, the current one marked.
    expect(res.body).toContain('<a href="?lang=fr" lang="fr" hreflang="fr">Français</a>');
    expect(res.body).toContain('<a href="?lang=es" lang="es" hreflang="es" aria-current="true">Español</a>');
  });

  it("falls back to the account's default language, then English", async () => {
    const req = await buildRequest(h.t, h.owner, {});
    expect((await page(req.identifier)).body).toContain('<html lang="en"');
    const patched = await h.call("PATCH", "/v1/account/", { default_language: "de" });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ default_language: "de" });
    const german = await page(req.identifier, { "accept-language": "ja-JP,ja;q=0.9" });
    expect(german.body).toContain('<html lang="de"');
    expect(german.body).toContain("Ihre Dateien");
    // The browser's supported language still wins over the account's default.
    expect((await page(req.identifier, { "accept-language": "pt-BR" })).body).toContain("Seus arquivos");
    await h.call("PATCH", "/v1/account/", { default_language: "en" });
  });

  it("remembers a language chosen on the page in a cookie, without script", async () => {
    const req = await buildRequest(h.t, h.owner, {});
    const choose = await page(req.identifier, { "accept-language": "es" }, "?lang=fr");
    expect(choose.statusCode).toBe(303);
    expect(choose.headers.location).toBe(`/r/${req.identifier}/`);
    expect(choose.headers["set-cookie"]).toBe(
      "ferry_lang=fr; Path=/; Max-Age=31536000; HttpOnly; SameSite=Lax",
    );
    const french = await page(req.identifier, { "accept-language": "es", cookie: "ferry_lang=fr" });
    expect(french.body).toContain('<html lang="fr"');
    expect(french.body).toContain("Vos fichiers");
    // Other query parameters survive the switch; unknown languages are ignored.
    const kept = await page(req.identifier, {}, "?error=empty&lang=de");
    expect(kept.headers.location).toBe(`/r/${req.identifier}/?error=empty`);
    const unknown = await page(req.identifier, {}, "?lang=xx");
    expect(unknown.statusCode).toBe(200);
    expect(unknown.headers["set-cookie"] ?? "").not.toContain("ferry_lang");
    const ignored = await page(req.identifier, { cookie: "ferry_lang=<x>", "accept-language": "de" });
    expect(ignored.body).toContain('<html lang="de"');
  });

  it("writes the not-found page, the home page and the refusal notices in the reader's language", async () => {
    const missing = await h.t.app.inject({
      method: "GET",
      url: "/r/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/",
      headers: { "accept-language": "de" },
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toContain("Dieser Link ist ungültig");
    const home = await h.t.app.inject({ method: "GET", url: "/", headers: { "accept-language": "pt" } });
    expect(home.body).toContain('<html lang="pt"');
    expect(home.body).toContain("Ferry: troca segura de arquivos");
    const req = await buildRequest(h.t, h.owner, {});
    const refused = await page(req.identifier, { "accept-language": "fr" }, "?error=empty");
    expect(refused.body).toContain("Vous n’avez envoyé aucun fichier.");
  });

  it("writes the default email and SMS in the account's default language, and tells templates the locale", async () => {
    await h.call("PATCH", "/v1/account/", { default_language: "de" });
    try {
      const req = await notifiableRequest(h.t, h.owner, [
        ["email", "jana@example.com"],
        ["sms", "+14155550123"],
      ]);
      expect((await sendNotification(h.t, h.owner, req.id)).status).toBe(200);
      await runNotificationJobs(h.t);
      const outbox = (await h.call("GET", `/v1/sandbox/messages/?request=${req.id}`)).json() as Json;
      const mail = outbox.results.find((m: Json) => m.channel === "email");
      const sms = outbox.results.find((m: Json) => m.channel === "sms");
      expect(mail.subject).toBe("[SANDBOX] Test Owner bittet Sie um Dateien");
      expect(mail.html).toContain('<html lang="de" dir="ltr">');
      expect(mail.html).toContain("Ihre Dateien hochladen");
      expect(mail.text).toContain("Wenn die Schaltfläche nicht funktioniert, öffnen Sie diese Adresse:");
      expect(mail.text).toContain("Diese Nachricht stammt aus einer Testinstallation (Sandbox).");
      expect(sms.text).toContain("Test Owner bittet Sie um Dateien:");

      const template = await h.call("POST", "/v1/email_template/", {
        slug: "by-language",
        subject: "{% if locale == 'de' %}Ihre Unterlagen{% else %}Your documents{% endif %}",
        html: "<p>lang={{ locale }}</p>",
      });
      expect(template.statusCode, template.body).toBe(201);
      const templated = await notifiableRequest(h.t, h.owner, [["email", "jo@example.com"]], {
        email_template_slug: "by-language",
      });
      await sendNotification(h.t, h.owner, templated.id);
      await runNotificationJobs(h.t);
      const own = (await h.call("GET", `/v1/sandbox/messages/?request=${templated.id}`)).json() as Json;
      expect(own.results[0].subject).toBe("[SANDBOX] Ihre Unterlagen");
      expect(own.results[0].html).toContain("lang=de");
    } finally {
      await h.call("PATCH", "/v1/account/", { default_language: "en" });
    }
  });

  it("writes the SMS default sentence in the account's language", async () => {
    await h.call("PATCH", "/v1/account/", { default_language: "es" });
    try {
      const req = await notifiableRequest(h.t, h.owner, [["sms", "+14155550124"]], { short_message: "" });
      await sendNotification(h.t, h.owner, req.id);
      await runNotificationJobs(h.t);
      const outbox = (await h.call("GET", `/v1/sandbox/messages/?request=${req.id}`)).json() as Json;
      expect(outbox.results[0].text).toContain("Test Owner le pide archivos:");
    } finally {
      await h.call("PATCH", "/v1/account/", { default_language: "en" });
    }
  });
});

describe("right-to-left readiness", () => {
  it("puts the translator's direction on <html>", () => {
    const rtl = { ...translator("en"), dir: "rtl" as const };
    const html = renderDocument(
      Layout({ title: "T", sandbox: false, brandName: "B", i18n: rtl, children: null }),
    );
    expect(html).toContain('<html lang="en" dir="rtl">');
  });

  it("lays the pages out with logical properties only (no left/right in the stylesheet)", () => {
    const css = readFileSync(resolve(import.meta.dirname, "../../web/static/recipient.css"), "utf8");
    const physical = css
      .split("\n")
      .map((line, i) => [i + 1, line] as const)
      .filter(([, line]) =>
        /(margin|padding|border)-(left|right)\b|text-align:\s*(left|right)|^\s*(left|right)\s*:|float:\s*(left|right)/.test(
          line,
        ),
      );
    expect(physical).toEqual([]);
  });
});

/**
 * The recipient's language in headless Chromium against a real server: a pull request read in
 * Spanish because the browser asks for it (context locale es-ES), through upload, the empty-Submit
 * confirmation, Submit and the completed page with its date in Spanish; the language switcher
 * turning the page French (a cookie, no script needed); the notification email, written in the
 * account's default language (German), read from a real SMTP server; and the page laid out right
 * to left when its direction is forced. Screenshots under test-results/recipient-languages-*.png.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectJson, type Json } from "../helpers/api.js";
import { axeViolations, launchBrowser, screenshot } from "../helpers/browser.js";
import { useHarness } from "../helpers/harness.js";
import { notifiableRequest, runNotificationJobs, sendNotification } from "../helpers/notifications.js";
import { freePort } from "../helpers/process.js";
import { startSmtpServer, type TestSmtpServer } from "../helpers/smtp.js";

const CHUNK = 64 * 1024;

let port: number;
let base: string;
let smtp: TestSmtpServer;
beforeAll(async () => {
  port = await freePort();
  base = `http://127.0.0.1:${port}`;
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await smtp?.close();
});
const h = useHarness({
  env: () => ({
    PUBLIC_BASE_URL: base,
    MAX_CHUNK_BYTES: String(CHUNK),
    FERRY_ENVIRONMENT: "live",
    SMTP_HOST: "127.0.0.1",
    SMTP_PORT: String(smtp.port),
    SMTP_TLS: "none",
    MAIL_FROM: "Ferry <files@ferry.test>",
  }),
});

let browser: Browser;
let dir: string;
let file: string;
beforeAll(async () => {
  await h.t.app.listen({ port, host: "127.0.0.1" });
  browser = await launchBrowser();
  dir = mkdtempSync(join(tmpdir(), "ferry-languages-"));
  file = join(dir, "declaración-2025.pdf");
  writeFileSync(file, Buffer.alloc(150_000, 7));
});
afterAll(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A page whose browser asks for Spanish (Accept-Language es-ES), in Madrid's time zone. */
async function spanishPage(): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({
    locale: "es-ES",
    timezoneId: "Europe/Madrid",
    viewport: { width: 1280, height: 900 },
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  return { context, page, errors };
}

describe("a pull request in the recipient's language", () => {
  let request: Json;
  let link: string;

  it("sends the notification email in the account's default language (German)", async () => {
    const patched = expectJson(await h.call("PATCH", "/v1/account/", { default_language: "de" }), 200);
    expect(patched.default_language).toBe("de");
    request = await notifiableRequest(h.t, h.owner, [["email", "lena@example.com"]], { message: "" });
    expect((await sendNotification(h.t, h.owner, request.id)).status).toBe(200);
    await runNotificationJobs(h.t);
    const [mail] = await smtp.waitFor(1);
    expect(mail!.to).toEqual(["lena@example.com"]);
    expect(mail!.parsed.subject).toBe("Test Owner bittet Sie um Dateien");
    expect(mail!.parsed.text).toContain("Ihre Dateien hochladen");
    expect(mail!.parsed.text).toContain(
      "Wenn die Schaltfläche nicht funktioniert, öffnen Sie diese Adresse:",
    );
    expect(String(mail!.parsed.html)).toContain('<html lang="de" dir="ltr">');
    link = `${base}/r/${request.identifier}/`;
    expect(mail!.parsed.text).toContain(link);
  });

  it("shows the page in Spanish because the browser asks for it, and uploads with Spanish progress", async () => {
    const { context, page, errors } = await spanishPage();
    await page.goto(link);
    expect(await page.getAttribute("html", "lang")).toBe("es");
    expect(await page.getAttribute("html", "dir")).toBe("ltr");
    expect(await page.locator("h1").textContent()).toBe("Test Owner le pide archivos");
    // Nothing uploaded yet: the confirmation for an empty Submit, in Spanish.
    expect(await page.locator("#confirm-empty label").textContent()).toBe("Enviar sin archivos");
    expect(await page.locator("#received-heading").isHidden()).toBe(true);
    // The page script's words come from the catalogue too: the offline banner…
    await context.setOffline(true);
    await page.locator(".fy-offline:not([hidden])").waitFor();
    expect(await page.locator(".fy-offline").textContent()).toBe(
      "No tiene conexión. Las subidas esperan y continuarán cuando vuelva la conexión.",
    );
    await context.setOffline(false);
    await page.locator(".fy-offline[hidden]").waitFor({ state: "attached" });
    // …and the upload's progress and states.
    await page.setInputFiles("#file-input", file);
    await page.locator("#received-list li").filter({ hasText: "declaración-2025.pdf" }).waitFor();
    expect(await page.locator("#received-heading").textContent()).toBe("Recibidos (1)");
    expect(await page.locator("#received-heading").isVisible()).toBe(true);
    expect(await page.locator("#received-list li .fy-muted").textContent()).toBe("150,0 KB");
    expect(await page.locator("#overall-text").textContent()).toBe(
      "1 de 1 archivo subido · 150,0 KB de 150,0 KB (100 %)",
    );
    expect(await page.locator("#upload-status").textContent()).toBe(
      "Todas las subidas han terminado. Ya puede enviar.",
    );
    expect(await page.locator("#submit-hint").textContent()).toBe(
      "Envíe cuando todos los archivos estén subidos. Después no podrá añadir más.",
    );
    expect(await page.getByRole("button", { name: "Eliminar declaración-2025.pdf" }).isVisible()).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, "recipient-languages-1-pull-es");
    expect(errors).toEqual([]);
    await context.close();
  });

  it("submits and shows the completed page in Spanish, its date in Spanish in the reader's zone", async () => {
    const { context, page, errors } = await spanishPage();
    await page.goto(link);
    await page.fill("#receiver-message", "Aquí tiene la declaración.");
    await Promise.all([
      page.waitForURL(link),
      page.getByRole("button", { name: "Enviar", exact: true }).click(),
    ]);
    expect(await page.locator("h1").textContent()).toBe("Gracias, sus archivos se han enviado");
    // Submitted at the test clock's 10:00 UTC: 11:00 in Madrid, in Spanish words.
    const when = page.locator(".fy-completed time");
    // (The joining words between date and time depend on the ICU version: ", " or " a las ".)
    await expect.poll(() => when.textContent()).toMatch(/^15 de enero de 2026(,| a las) 11:00$/);
    expect(await when.getAttribute("title")).toMatch(/^15 de enero de 2026(,| a las) 10:00 UTC$/);
    expect(await page.locator(".fy-completed").textContent()).toContain(
      "Esta solicitud está completada y no admite más archivos.",
    );
    expect(await page.locator(".fy-completed .fy-file .fy-muted").textContent()).toBe(
      "150,0 KB · Documento PDF",
    );
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, "recipient-languages-2-completed-es");

    // The switcher: French, remembered for the next pages of the same browser.
    await Promise.all([page.waitForURL(link), page.getByRole("link", { name: "Français" }).click()]);
    expect(await page.getAttribute("html", "lang")).toBe("fr");
    expect(await page.locator("h1").textContent()).toBe("Merci, vos fichiers ont été envoyés");
    await expect
      .poll(() => page.locator(".fy-completed time").textContent())
      .toMatch(/^15 janvier 2026( à|,) 11:00$/);
    expect(await page.locator(".fy-completed .fy-file .fy-muted").textContent()).toBe(
      "150,0 Ko · Document PDF",
    );
    expect(
      await page
        .getByRole("navigation", { name: "Langue" })
        .getByRole("link", { name: "Français" })
        .getAttribute("aria-current"),
    ).toBe("true");
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === "ferry_lang")).toMatchObject({
      value: "fr",
      httpOnly: true,
      path: "/",
    });
    await page.goto(`${base}/`);
    expect(await page.locator("h1").textContent()).toBe("Ferry : échange de fichiers sécurisé");
    await screenshot(page, "recipient-languages-3-switched-fr");
    expect(errors).toEqual([]);
    await context.close();
  });

  it("lays the pull page out right to left when its direction is forced", async () => {
    const other = await notifiableRequest(h.t, h.owner, [["email", "rtl@example.com"]]);
    const { context, page, errors } = await spanishPage();
    await page.goto(`${base}/r/${other.identifier}/`);
    await page.setInputFiles("#file-input", file);
    await page.locator("#received-list li").filter({ hasText: "declaración-2025.pdf" }).waitFor();
    await page.evaluate(() => {
      document.documentElement.dir = "rtl";
    });
    const row = page.locator("#received-list li").first();
    const name = (await row.locator(".fy-file-name").boundingBox())!;
    const remove = (await row.getByRole("button").boundingBox())!;
    // Start is on the right: the name sits to the right of its Remove button.
    expect(remove.x + remove.width).toBeLessThanOrEqual(name.x);
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, "recipient-languages-4-rtl");
    expect(errors).toEqual([]);
    await context.close();
    await h.call("PATCH", "/v1/account/", { default_language: "en" });
  });
});

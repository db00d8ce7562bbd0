/**
 * Message composition: the SMS text, the email subject, HTML and text alternative of a request
 * notification, and the merge data templates see. Pure functions apart from template rendering.
 */

import { isLocale, type Translator, translator } from "../../shared/i18n/i18n.js";
import type { RequesterRow } from "../requesters/index.js";
import { escapeHtml, ZonedDateTime } from "./engine/django-filters.js";
import type { TemplateEngine } from "./engine/template-engine.js";

/**
 * The email subject used when the owner gave none: names the requester, else the owner, else
 * nobody, and says whether files are sent (push) or asked for (pull).
 */
export function generatedSubject(type: "push" | "pull", senderName: string): string {
  const who = senderName.trim();
  if (type === "push") return who ? `${who} has sent you files` : "You have received files";
  return who ? `${who} has requested files from you` : "You have been asked to upload files";
}

/** The request fields composition reads (a requests row has them all). */
export interface RequestFacts {
  id: number;
  identifier: string;
  type: "push" | "pull";
  message: string;
  short_message: string;
  long_message_subject: string;
  long_message: string;
  is_draft: number | boolean;
  complete: number | boolean;
  is_expired: number | boolean;
  receiver_message: string | null;
  email_template_slug: string | null;
  tfa_send_to: string | null;
  expires_at: string | null;
  created: string;
  updated: string;
}

/** Requester fields shown in messages (a requesters row has them all). */
export type RequesterFacts = Pick<RequesterRow, "id" | (typeof REQUESTER_FIELDS)[number]>;

/** Everything needed to compose one notification. */
export interface MessageInput {
  request: RequestFacts;
  requester: RequesterFacts | undefined;
  account: { name: string; email: string };
  contact: { first_name: string; last_name: string };
  recipientUrl: string;
  sandbox: boolean;
  /** The request's email template, when it names one. */
  template?: { subject: string; html: string } | undefined;
  /** Absolute URL of the open-tracking pixel (emails only). */
  pixelUrl?: string | undefined;
  /** A push request's files, listed by the default layout with their total size and the expiry. */
  files?: { name: string; bytes: number }[] | undefined;
  /**
   * The language of the message Ferry writes (the account's default language; ADR 0033): default
   * subject, layout, SMS text, markers. Owner templates get it as `locale` and write what they like.
   */
  locale?: string | undefined;
}

/** The translator of a message's language (English when unset or unsupported). */
export function messageTranslator(input: Pick<MessageInput, "locale">): Translator {
  return translator(isLocale(input.locale) ? input.locale : "en");
}

/** The files of a push message: one line each, then "3 files · 31.6 MB · available until …". */
function filesBlock(input: MessageInput, i18n: Translator): string {
  const files = input.request.type === "push" ? (input.files ?? []) : [];
  if (files.length === 0) return "";
  const total = files.reduce((sum, f) => sum + f.bytes, 0);
  const expiry = input.request.expires_at
    ? ` · ${i18n.t("email.availableUntil", { date: i18n.date(input.request.expires_at) })}`
    : "";
  const items = files
    .map((f) => `<li>${escapeHtml(f.name)} <span style="color:#59636e">(${i18n.bytes(f.bytes)})</span></li>`)
    .join("\n");
  const summary = i18n.t("email.filesTotal", { count: files.length, size: i18n.bytes(total) });
  return `<ul style="margin:0 0 8px;padding-inline-start:20px">
${items}
</ul>
<p style="margin:0 0 16px;font-weight:600">${escapeHtml(summary + expiry)}</p>`;
}

/** A composed email. */
export interface ComposedEmail {
  subject: string;
  html: string;
  text: string;
}

/** The SANDBOX marker text put in front of messages of a sandbox deployment. */
export const SANDBOX_MARKER = "[SANDBOX]";

const MERGE_REQUEST_FIELDS = [
  "id",
  "identifier",
  "type",
  "message",
  "short_message",
  "long_message_subject",
  "long_message",
  "receiver_message",
  "email_template_slug",
  "tfa_send_to",
] as const;

const REQUESTER_FIELDS = [
  "first_name",
  "last_name",
  "email",
  "mobile",
  "company",
  "role",
  "location",
  "facebook",
  "linkedin",
  "twitter",
  "skype",
] as const;

/**
 * The merge data of a template: `locale` (the language Ferry writes the message's own parts in:
 * en, es, fr, de or pt; ADR 0033), the request's fields at the top level and under `request`, `contact`
 * (first_name, last_name), `requester` (its fields; blank when the request has none), `account` (name),
 * `recipient_url`, and the dates `created`, `updated`, `expires_at` (null when unset) as date values
 * for the `date` and `timezone` filters. Private notes and the callback URL are not exposed.
 */
export function buildMergeContext(input: MessageInput): Record<string, unknown> {
  const r = input.request;
  const request: Record<string, unknown> = {};
  for (const f of MERGE_REQUEST_FIELDS) request[f] = r[f] ?? "";
  request.is_draft = Boolean(r.is_draft);
  request.complete = Boolean(r.complete);
  request.is_expired = Boolean(r.is_expired);
  request.created = new ZonedDateTime(r.created, "UTC");
  request.updated = new ZonedDateTime(r.updated, "UTC");
  request.expires_at = r.expires_at ? new ZonedDateTime(r.expires_at, "UTC") : null;
  request.recipient_url = input.recipientUrl;
  const requester: Record<string, unknown> = { id: input.requester?.id ?? null };
  for (const f of REQUESTER_FIELDS) requester[f] = input.requester?.[f] ?? "";
  requester.full_name = senderName(input);
  const locale = messageTranslator(input).locale;
  return {
    ...request,
    locale,
    request,
    contact: { first_name: input.contact.first_name, last_name: input.contact.last_name },
    requester,
    account: { name: input.account.name },
    recipient_url: input.recipientUrl,
  };
}

/** The requester's name, else the account's name, else "". */
function senderNameOrEmpty(input: Pick<MessageInput, "requester" | "account">): string {
  const fromRequester = input.requester
    ? `${input.requester.first_name} ${input.requester.last_name}`.trim()
    : "";
  return fromRequester || input.account.name.trim();
}

/** The sender shown in messages: the requester's name, else the account's name, else "Someone" (translated). */
export function senderName(input: Pick<MessageInput, "requester" | "account" | "locale">): string {
  return senderNameOrEmpty(input) || messageTranslator(input).t("sender.someone");
}

/**
 * The generated subject used when neither the request nor its template gives one, in the message's
 * language (the Request object's `long_message_subject` shows the English one).
 */
export function defaultSubject(input: MessageInput): string {
  const i18n = messageTranslator(input);
  const who = senderNameOrEmpty(input);
  if (input.request.type === "push")
    return who ? i18n.t("email.subject.push", { name: who }) : i18n.t("email.subject.pushAnonymous");
  return who ? i18n.t("email.subject.pull", { name: who }) : i18n.t("email.subject.pullAnonymous");
}

/**
 * The SMS text: `short_message` (or a default sentence) followed by the recipient URL, prefixed with
 * the SANDBOX marker in sandbox.
 */
export function composeSms(input: MessageInput): string {
  const who = senderName(input);
  const i18n = messageTranslator(input);
  const lead =
    input.request.short_message.trim() ||
    i18n.t(input.request.type === "push" ? "sms.push" : "sms.pull", { name: who });
  return `${input.sandbox ? `${SANDBOX_MARKER} ` : ""}${lead} ${input.recipientUrl}`;
}

/**
 * Composes the email. With a template, its subject and HTML are rendered with buildMergeContext
 * (TemplateError propagates); otherwise the default layout shows `long_message` (or `message`) as
 * text and a link. The request's own `long_message_subject` wins over the template's subject. The
 * recipient link is added when a template leaves it out; the tracking pixel and SANDBOX marker are added.
 */
export async function composeEmail(engine: TemplateEngine, input: MessageInput): Promise<ComposedEmail> {
  if (!input.template) return composeDefaultEmail(input);
  let subject = input.request.long_message_subject.trim();
  const context = buildMergeContext(input);
  if (!subject && input.template.subject.trim()) {
    // Rendered output is HTML-escaped; a Subject header is plain text.
    subject = decodeEntities(await engine.render(input.template.subject, context)).trim();
  }
  const body = await engine.render(input.template.html, context);
  return finishEmail(input, subject, body);
}

/**
 * composeEmail for a request without a template: Ferry's own layout around the owner's text, all
 * of it escaped. No owner code runs, so it needs neither a template engine nor a render worker.
 */
export function composeDefaultEmail(input: MessageInput): ComposedEmail {
  return finishEmail(input, input.request.long_message_subject.trim(), defaultLayout(input));
}

/** The subject, HTML and text of an email from its rendered (or default) body. */
function finishEmail(input: MessageInput, requestSubject: string, renderedBody: string): ComposedEmail {
  const url = input.recipientUrl;
  let subject = requestSubject;
  let body = renderedBody;
  if (!subject) subject = defaultSubject(input);
  subject = subject.replace(/[\r\n]+/g, " ").slice(0, 998);
  if (input.sandbox) subject = `${SANDBOX_MARKER} ${subject}`;
  if (input.template && !body.includes(escapeHtml(url)) && !body.includes(url)) {
    body = insertBeforeBodyEnd(body, `<p><a href="${escapeHtml(url)}">${escapeHtml(url)}</a></p>`);
  }
  let text = htmlToText(body);
  if (!text.includes(url)) text = `${text}\n\n${url}`.trim();
  if (input.sandbox) {
    const i18n = messageTranslator(input);
    body = insertAfterBodyStart(body, sandboxBanner(i18n));
    text = `${SANDBOX_MARKER} ${i18n.t("email.sandboxText")}\n\n${text}`;
  }
  if (input.pixelUrl) {
    body = insertBeforeBodyEnd(
      body,
      `<img src="${escapeHtml(input.pixelUrl)}" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px">`,
    );
  }
  return { subject, html: body, text };
}

/**
 * An email of plain text written by the owner (a container's email text) with a button and a line
 * to the recipient's link: HTML escaped paragraph by paragraph, the text part as written plus the
 * link, the SANDBOX marker and banner in sandbox.
 */
export function composeLinkEmail(input: {
  subject: string;
  body: string;
  link: string;
  action: string;
  sandbox: boolean;
  /** The language of Ferry's own words in it (fallback line, sandbox marker); English by default. */
  locale?: string | undefined;
}): ComposedEmail {
  const i18n = messageTranslator(input);
  const text = input.body.replace(/\r\n?/g, "\n").trim();
  const paragraphs = text
    .split(/\n{2,}/)
    .filter((p) => p.trim() !== "")
    .map((p) => `<p style="margin:0 0 16px">${escapeHtml(p).replace(/\n/g, "<br>")}</p>`)
    .join("\n");
  const url = escapeHtml(input.link);
  let html = `<!doctype html>
<html lang="${i18n.locale}" dir="${i18n.dir}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(input.subject)}</title></head>
<body style="margin:0;padding:24px;font-family:-apple-system,Segoe UI,Roboto,sans-serif;color:#1f2328;line-height:1.5">
${paragraphs}
<p style="margin:24px 0"><a href="${url}" style="background:#0b57d0;color:#fff;padding:10px 18px;border-radius:6px;text-decoration:none;display:inline-block">${escapeHtml(input.action)}</a></p>
<p style="color:#59636e;font-size:12px">${escapeHtml(i18n.t("email.fallbackLink", { url: input.link }))}</p>
</body></html>`;
  let subject = input.subject
    .replace(/[\r\n]+/g, " ")
    .trim()
    .slice(0, 998);
  let plain = `${text}\n\n${input.link}`.trim();
  if (input.sandbox) {
    subject = `${SANDBOX_MARKER} ${subject}`;
    html = insertAfterBodyStart(html, sandboxBanner(i18n));
    plain = `${SANDBOX_MARKER} ${i18n.t("email.sandboxText")}\n\n${plain}`;
  }
  return { subject, html, text: plain };
}

function sandboxBanner(i18n: Translator): string {
  return `<div style="background:#fff3cd;color:#664d03;border:1px solid #ffe69c;padding:8px 12px;font:bold 13px sans-serif">${escapeHtml(i18n.t("email.sandboxBanner"))}</div>`;
}

function defaultLayout(input: MessageInput): string {
  const i18n = messageTranslator(input);
  const r = input.request;
  const text = (r.long_message.trim() || r.message.trim()).replace(/\r\n?/g, "\n");
  const paragraphs = text
    ? text
        .split(/\n{2,}/)
        .map((p) => `<p style="margin:0 0 16px">${escapeHtml(p).replace(/\n/g, "<br>")}</p>`)
        .join("\n")
    : `<p style="margin:0 0 16px">${escapeHtml(defaultSubject(input))}.</p>`;
  const action = i18n.t(r.type === "push" ? "email.action.push" : "email.action.pull");
  const url = escapeHtml(input.recipientUrl);
  return `<!doctype html>
<html lang="${i18n.locale}" dir="${i18n.dir}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(defaultSubject(input))}</title></head>
<body style="margin:0;padding:24px;font-family:-apple-system,Segoe UI,Roboto,sans-serif;color:#1f2328;line-height:1.5">
${paragraphs}
${filesBlock(input, i18n)}
<p style="margin:24px 0"><a href="${url}" style="background:#0b57d0;color:#fff;padding:10px 18px;border-radius:6px;text-decoration:none;display:inline-block">${escapeHtml(action)}</a></p>
<p style="color:#59636e;font-size:12px">${escapeHtml(i18n.t("email.fallbackLink", { url: input.recipientUrl }))}</p>
</body></html>`;
}

function insertAfterBodyStart(html: string, fragment: string): string {
  const m = /<body[^>]*>/i.exec(html);
  if (!m) return fragment + html;
  const at = m.index + m[0].length;
  return `${html.slice(0, at)}\n${fragment}${html.slice(at)}`;
}

/** Puts `fragment` just before `</body>` (or at the end when there is none). */
export function insertBeforeBodyEnd(html: string, fragment: string): string {
  const at = html.search(/<\/body>/i);
  if (at < 0) return `${html}\n${fragment}`;
  return `${html.slice(0, at)}${fragment}\n${html.slice(at)}`;
}

/**
 * A plain-text rendering of email HTML: head, style and script dropped, block ends and <br> become
 * line breaks, links become "text (href)", tags removed, entities decoded.
 */
export function htmlToText(html: string): string {
  const text = html
    .replace(/<(head|style|script|title)\b[^>]*>[\s\S]*?<\/\1>/gi, "")
    .replace(/<img\b[^>]*>/gi, "")
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(
      /<a\b[^>]*?href\s*=\s*(["'])(.*?)\1[^>]*>([\s\S]*?)<\/a>/gi,
      (_m, _q, href: string, inner: string) => {
        const label = inner.replace(/<[^>]+>/g, "").trim();
        const target = decodeEntities(href);
        return !label || decodeEntities(label) === target ? target : `${label} (${target})`;
      },
    )
    .replace(/<\/(p|div|h[1-6]|li|tr|table|blockquote)>/gi, "\n\n")
    .replace(/<li\b[^>]*>/gi, "- ")
    .replace(/<[^>]+>/g, "");
  return decodeEntities(text)
    .split("\n")
    .map((l) => l.replace(/[ \t]+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

function decodeEntities(s: string): string {
  return s
    .replace(/&nbsp;/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&#(\d+);/g, (_m, d: string) => safeFromCodePoint(Number(d)))
    .replace(/&#x([0-9a-f]+);/gi, (_m, h: string) => safeFromCodePoint(Number.parseInt(h, 16)))
    .replace(/&amp;/g, "&");
}

function safeFromCodePoint(n: number): string {
  return n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : "";
}

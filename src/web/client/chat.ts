/**
 * The session chat: new messages from the sender appear without a reload (polling, every 5 s while
 * the page is visible, every 30 s while hidden, backing off to 60 s on errors), and replies are sent
 * without leaving the page. Every text is inserted as text, never as HTML.
 */

import { pageLocale, t } from "./messages.js";

interface Entry {
  kind: "message" | "reply";
  id: number;
  author: string;
  title: string;
  body: string;
  created: string;
}

/** Chat times in the reader's own time zone and the page's language ("15 January 2026 at 10:00"). */
const timeFormat = new Intl.DateTimeFormat(pageLocale.format, { dateStyle: "long", timeStyle: "short" });

const VISIBLE_MS = 5_000;
const HIDDEN_MS = 30_000;
const MAX_BACKOFF_MS = 60_000;

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Starts the chat of the section `root` (`#chat` with data-chat-url and the newest ids shown). */
export function startChat(root: HTMLElement, csrf: string): void {
  const url = root.dataset.chatUrl ?? "";
  const log = root.querySelector<HTMLOListElement>("#chat-log");
  const form = root.querySelector<HTMLFormElement>("#chat-form");
  const status = root.querySelector<HTMLElement>("#chat-status");
  if (!url || !log) return;
  for (const when of log.querySelectorAll<HTMLTimeElement>("time[datetime]"))
    when.textContent = timeFormat.format(new Date(when.dateTime));
  let afterMessage = Number(root.dataset.afterMessage ?? "0");
  let afterReply = Number(root.dataset.afterReply ?? "0");
  const seen = new Set<string>();
  let failures = 0;
  let timer: number | undefined;
  // A chat shown closed stays closed (the sender's close is final, an expired session ends).
  let stopped = root.dataset.chatOpen === "false";

  const append = (entry: Entry): void => {
    const key = `${entry.kind}:${entry.id}`;
    if (seen.has(key)) return;
    seen.add(key);
    if (entry.kind === "message") afterMessage = Math.max(afterMessage, entry.id);
    else afterReply = Math.max(afterReply, entry.id);
    log.querySelector("[data-role=chat-empty]")?.remove();
    const item = el("li", `fy-chat-entry fy-chat-${entry.kind}`);
    const meta = el("p", "fy-chat-meta");
    const when = el("time", "fy-muted", timeFormat.format(new Date(entry.created)));
    when.dateTime = entry.created;
    meta.append(el("span", "fy-chat-author", entry.author), " ", when);
    item.append(meta);
    if (entry.title) item.append(el("p", "fy-chat-title", entry.title));
    item.append(el("p", "fy-message", entry.body));
    log.append(item);
  };

  const schedule = (): void => {
    if (stopped) return;
    const base = document.hidden ? HIDDEN_MS : VISIBLE_MS;
    const delay = Math.min(MAX_BACKOFF_MS, base * 2 ** failures);
    timer = window.setTimeout(() => void poll(), delay);
  };

  /** The chat stops taking replies: the form goes, a note says why, the transcript stays. */
  const close = (reason: "closed" | "expired" | null): void => {
    stopped = true;
    window.clearTimeout(timer);
    if (form && !form.hidden) {
      form.hidden = true;
      const note = el(
        "p",
        "fy-muted fy-chat-closed",
        t(reason === "closed" ? "client.chatClosedBySender" : "client.chatClosed"),
      );
      note.id = "chat-closed";
      form.after(note);
    }
  };

  async function poll(): Promise<void> {
    try {
      const res = await fetch(`${url}?after_message=${afterMessage}&after_reply=${afterReply}`, {
        headers: { accept: "application/json" },
        credentials: "same-origin",
      });
      if (!res.ok) throw new Error(String(res.status));
      const page = (await res.json()) as {
        entries: Entry[];
        open: boolean;
        closed?: "closed" | "expired" | null;
      };
      for (const entry of page.entries) append(entry);
      failures = 0;
      if (!page.open) close(page.closed ?? null);
    } catch {
      failures = Math.min(failures + 1, 4);
    }
    schedule();
  }

  document.addEventListener("visibilitychange", () => {
    if (stopped || document.hidden) return;
    window.clearTimeout(timer);
    void poll();
  });

  form?.addEventListener("submit", (event) => {
    event.preventDefault();
    const box = form.querySelector<HTMLTextAreaElement>("textarea[name=body]");
    const button = form.querySelector<HTMLButtonElement>("button[type=submit]");
    const text = box?.value.trim() ?? "";
    if (!box || !text) {
      if (status) status.textContent = t("client.chatEmptyReply");
      box?.focus();
      return;
    }
    if (button) button.disabled = true;
    if (status) status.textContent = t("client.chatSending");
    fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", accept: "application/json", "x-csrf-token": csrf },
      body: JSON.stringify({ body: text }),
    })
      .then(async (res) => {
        const answer = (await res.json().catch(() => ({}))) as Partial<Entry> & { detail?: string };
        if (res.status === 429) {
          // Too many replies from this link just now: the typed reply stays in the box.
          const seconds = Math.max(1, Number.parseInt(res.headers.get("retry-after") ?? "", 10) || 60);
          throw new Error(t("client.chatTooFast", { seconds }));
        }
        if (res.status === 422) {
          // The chat was closed meanwhile: the next poll says why and hides the form.
          window.clearTimeout(timer);
          void poll();
          throw new Error(t("client.chatClosed"));
        }
        if (res.status !== 201) throw new Error(answer.detail ?? t("client.chatFailed"));
        append(answer as Entry);
        box.value = "";
        if (status) status.textContent = t("client.chatSent");
      })
      .catch((err: Error) => {
        if (status) status.textContent = err.message || t("client.chatFailed");
      })
      .finally(() => {
        if (button) button.disabled = false;
        box.focus();
      });
  });

  schedule();
}

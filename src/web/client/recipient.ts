/**
 * Client entry of the recipient pages: the uploader of a pull page or of each open pull feature of
 * a session, and a session's chat. No inline script anywhere.
 */
import { startChat } from "./chat.js";
import { pageLocale, t } from "./messages.js";
import { Uploader } from "./uploader.js";

function byId<T extends HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`missing #${id}`);
  return node as T;
}

localTimes();
offlineBanner();

const uploaders: Uploader[] = [];

const main = document.getElementById("main");
if (main?.dataset.identifier && document.getElementById("file-input")) {
  uploaders.push(
    new Uploader(
      {
        base: `/r/${encodeURIComponent(main.dataset.identifier)}/uploads`,
        csrf: main.dataset.csrf ?? "",
        chunkBytes: Number(main.dataset.chunkBytes),
        maxFileBytes: Number(main.dataset.maxFileBytes),
        extensions: (main.dataset.extensions ?? "").split(",").filter(Boolean),
      },
      {
        input: byId("file-input"),
        dropzone: byId("dropzone"),
        list: byId("upload-list"),
        received: byId("received-list"),
        receivedHeading: byId("received-heading"),
        overall: byId("overall"),
        overallBar: byId("overall-progress"),
        overallText: byId("overall-text"),
        pause: byId("pause-all"),
        resume: byId("resume-all"),
        status: byId("upload-status"),
        form: byId("submit-form"),
        submit: byId("submit-button"),
        submitHint: byId("submit-hint"),
        confirmEmpty: document.getElementById("confirm-empty") ?? undefined,
      },
    ),
  );
}

const chat = document.getElementById("chat");
if (chat?.dataset.chatUrl) startChat(chat, main?.dataset.csrf ?? "");

// Session pages: one uploader per open pull feature, on the elements of its card.
for (const card of document.querySelectorAll<HTMLElement>("[data-upload-base]")) {
  const role = <T extends HTMLElement>(name: string): T => {
    const node = card.querySelector<T>(`[data-role="${name}"]`);
    if (!node) throw new Error(`missing ${name} in ${card.id}`);
    return node;
  };
  uploaders.push(
    new Uploader(
      {
        base: card.dataset.uploadBase ?? "",
        csrf: main?.dataset.csrf ?? "",
        chunkBytes: Number(card.dataset.chunkBytes),
        maxFileBytes: Number(card.dataset.maxFileBytes),
        extensions: (card.dataset.extensions ?? "").split(",").filter(Boolean),
      },
      {
        input: role("file-input"),
        dropzone: role("dropzone"),
        list: role("upload-list"),
        received: role("received"),
        receivedHeading: role("received-heading"),
        overall: role("overall"),
        overallBar: role("overall-bar"),
        overallText: role("overall-text"),
        pause: role("pause"),
        resume: role("resume"),
        status: role("status"),
        form: role("submit-form"),
        submit: role("submit"),
        submitHint: role("submit-hint"),
      },
    ),
  );
}

if (uploaders.length > 0) acceptDropsAnywhere(uploaders);
for (const field of document.querySelectorAll<HTMLTextAreaElement>(
  'form textarea[name="receiver_message"], form#chat-form textarea[name="body"]',
))
  keepReplyDraft(field);

/**
 * The reply typed before a refused Submit survives its redirect back to the page (PRG): kept in
 * this tab's sessionStorage when the form is sent, put back when the page shows a refusal.
 */
function keepReplyDraft(field: HTMLTextAreaElement): void {
  const key = `ferry-reply:${field.form?.getAttribute("action") ?? ""}`;
  try {
    const saved = sessionStorage.getItem(key);
    const query = new URLSearchParams(location.search);
    if (saved && field.value === "" && (query.has("error") || query.has("refused"))) field.value = saved;
    sessionStorage.removeItem(key);
    field.form?.addEventListener("submit", () => sessionStorage.setItem(key, field.value));
  } catch {
    // storage unavailable (private mode): the reply is simply not kept
  }
}

/**
 * The whole page takes dropped files: a file dropped anywhere goes to the uploader under it (or the
 * only one), instead of the browser leaving the page to open the file.
 */
function acceptDropsAnywhere(list: Uploader[]): void {
  let depth = 0;
  const hasFiles = (e: DragEvent) => Array.from(e.dataTransfer?.types ?? []).includes("Files");
  const target = (e: DragEvent): Uploader | undefined => {
    const node = e.target instanceof Node ? e.target : null;
    return (
      list.find((u) => node && u.dropzone.closest("[data-upload-base]")?.contains(node)) ??
      (list.length === 1 ? list[0] : undefined)
    );
  };
  const stop = () => {
    depth = 0;
    document.body.classList.remove("fy-dragging");
    for (const u of list) u.dropzone.classList.remove("fy-dragover");
  };
  document.addEventListener("dragenter", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    depth += 1;
    document.body.classList.add("fy-dragging");
  });
  document.addEventListener("dragover", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    const over = target(e);
    for (const u of list) u.dropzone.classList.toggle("fy-dragover", u === over);
    if (e.dataTransfer) e.dataTransfer.dropEffect = over ? "copy" : "none";
  });
  document.addEventListener("dragleave", () => {
    depth -= 1;
    if (depth <= 0) stop();
  });
  document.addEventListener("drop", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    const over = target(e);
    stop();
    if (over) over.add(Array.from(e.dataTransfer?.files ?? []));
  });
}

/**
 * Dates rendered in UTC by the server, shown in the reader's own time zone and the page's language
 * (the UTC text stays as a tooltip).
 */
function localTimes(): void {
  const format = new Intl.DateTimeFormat(pageLocale.format, { dateStyle: "long", timeStyle: "short" });
  for (const node of document.querySelectorAll<HTMLTimeElement>("time[datetime]")) {
    const date = new Date(node.dateTime);
    if (Number.isNaN(date.getTime())) continue;
    node.title = node.textContent ?? "";
    node.textContent = format.format(date);
  }
}

/** A banner while the browser is offline; uploads wait and continue once it is back. */
function offlineBanner(): void {
  const banner = document.createElement("p");
  banner.className = "fy-offline";
  banner.setAttribute("role", "status");
  banner.hidden = true;
  banner.textContent = t("client.offline");
  (document.getElementById("main") ?? document.body).prepend(banner);
  const update = () => {
    banner.hidden = navigator.onLine;
  };
  window.addEventListener("online", update);
  window.addEventListener("offline", update);
  update();
}

/**
 * Client entry of the recipient pages: the uploader of a pull page or of each open pull feature of
 * a session, and a session's chat. No inline script anywhere.
 */
import { startChat } from "./chat.js";
import { Uploader } from "./uploader.js";

function byId<T extends HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`missing #${id}`);
  return node as T;
}

const main = document.getElementById("main");
if (main?.dataset.identifier && document.getElementById("file-input")) {
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
    },
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
  );
}

/** Client entry of the recipient pages: starts the uploader on a pull page. No inline script anywhere. */
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
      identifier: main.dataset.identifier,
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

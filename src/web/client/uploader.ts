/**
 * The pull page's resumable uploader: files go in chunks (at most 4 MiB) through the recipient
 * upload endpoints. Resume = ask the server which chunks it holds, then send the missing ones; a
 * network drop retries with backoff. An unfinished upload the page did not start itself (a lost
 * first answer, another tab, a reload) is continued only when the server lists it with the chosen
 * file's fingerprint, size and chunk count, so one file's chunks never join another's (ADR 0022).
 */

import { t } from "./messages.js";
import {
  describeError,
  errorText,
  fingerprintOf,
  formatBytes,
  HttpError,
  isUnfinishedUploadOf,
  refusal,
  type ServerUpload,
  type UploaderOptions,
  unfinishedNotice,
} from "./upload-rules.js";

type Status = "queued" | "uploading" | "paused" | "retrying" | "done" | "error" | "removed";

interface Item {
  file: File;
  /** The file's fingerprint, once read (before the item's first upload call). */
  fingerprint: string | undefined;
  totalChunks: number;
  mediaId: number | undefined;
  received: Set<number>;
  /** Bytes of the chunk in flight already sent. */
  inFlight: number;
  status: Status;
  message: string;
  row: HTMLLIElement;
  bar: HTMLProgressElement;
  text: HTMLElement;
  remove: HTMLButtonElement;
  /** The XMLHttpRequest of this item's chunk in flight. */
  xhr: XMLHttpRequest | undefined;
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** "about 40 seconds left", "about 3 minutes left", "about 2 hours left" (in the page's language). */
function timeLeft(seconds: number): string {
  if (seconds < 60) return t("client.secondsLeft", { count: Math.max(1, Math.round(seconds)) });
  if (seconds < 3600) return t("client.minutesLeft", { count: Math.round(seconds / 60) });
  return t("client.hoursLeft", { count: Math.round(seconds / 3600) });
}

/** Wires the uploader to the pull page's elements. */
export class Uploader {
  private readonly items: Item[] = [];
  private paused = false;
  private running = false;
  private current: XMLHttpRequest | undefined;
  private wakeRetry: (() => void) | undefined;
  private readonly base: string;
  /** Unfinished uploads the server listed at the last sync that no chosen file continues. */
  private unfinished: ServerUpload[] = [];

  constructor(
    private readonly options: UploaderOptions,
    private readonly ui: {
      input: HTMLInputElement;
      dropzone: HTMLElement;
      list: HTMLUListElement;
      received: HTMLUListElement;
      receivedHeading: HTMLElement;
      overall: HTMLElement;
      overallBar: HTMLProgressElement;
      overallText: HTMLElement;
      pause: HTMLButtonElement;
      resume: HTMLButtonElement;
      status: HTMLElement;
      form: HTMLFormElement;
      submit: HTMLButtonElement;
      submitHint: HTMLElement;
      /** The "Submit without files" confirmation, shown while nothing is uploaded. */
      confirmEmpty?: HTMLElement | undefined;
    },
  ) {
    this.base = options.base;
    ui.input.addEventListener("change", () => {
      this.add(Array.from(ui.input.files ?? []));
      ui.input.value = "";
    });
    ui.pause.addEventListener("click", () => this.setPaused(true));
    ui.resume.addEventListener("click", () => this.setPaused(false));
    ui.form.addEventListener("submit", (e) => {
      if (this.busy()) {
        e.preventDefault();
        this.announce(t("client.waitForUploads"));
      }
    });
    window.addEventListener("online", () => this.wakeRetry?.());
    window.addEventListener("beforeunload", (e) => {
      if (!this.busy() || this.paused) return;
      // Leaving now stops the upload in flight: the browser asks first.
      e.preventDefault();
      e.returnValue = t("client.leaveWarning");
    });
    for (const li of Array.from(ui.received.querySelectorAll<HTMLLIElement>("li[data-media-id]"))) {
      const name = li.querySelector(".fy-file-name")?.textContent ?? "";
      this.addRemoveButton(li, name, () => this.removeReceived(li, Number(li.dataset.mediaId), name));
    }
    // What the server holds: unfinished uploads left before a reload are listed at once.
    void this.sync()
      .then(() => this.refresh())
      .catch(() => undefined);
  }

  /** The element that takes files dropped on it (the page routes drops anywhere to one uploader). */
  get dropzone(): HTMLElement {
    return this.ui.dropzone;
  }

  private busy(): boolean {
    return this.items.some((i) => i.status !== "done" && i.status !== "error");
  }

  /** A "Remove" button at the end of a file row. */
  private addRemoveButton(li: HTMLElement, name: string, onClick: () => void): HTMLButtonElement {
    const button = el("button", "fy-button fy-button-secondary fy-button-small", t("client.remove"));
    button.type = "button";
    button.dataset.role = "remove";
    button.setAttribute("aria-label", t("client.removeLabel", { name }));
    button.addEventListener("click", onClick);
    li.append(button);
    return button;
  }

  /** Moves focus somewhere sensible after a row (and its button) went away. */
  private focusAfterRemoval(): void {
    const next = this.ui.list
      .closest("section, article, .fy-card")
      ?.querySelector<HTMLButtonElement>("button[data-role='remove']");
    (next ?? this.ui.input).focus();
  }

  /** DELETE of one upload on the server; 404 counts as gone already. */
  private async deleteOnServer(mediaId: number): Promise<void> {
    const res = await fetch(`${this.base}/${mediaId}`, {
      method: "DELETE",
      headers: { "x-csrf-token": this.options.csrf, accept: "application/json" },
    });
    if (!res.ok && res.status !== 404) throw new HttpError(res.status, await errorText(res));
  }

  /** Removes a file the server already holds completely (listed under Received). */
  private async removeReceived(li: HTMLElement, mediaId: number, name: string): Promise<void> {
    try {
      await this.deleteOnServer(mediaId);
    } catch (err) {
      this.announce(t("client.removeFailed", { name, reason: (err as Error).message }));
      return;
    }
    const item = this.items.find((i) => i.mediaId === mediaId);
    if (item) {
      item.status = "removed";
      this.items.splice(this.items.indexOf(item), 1);
      item.row.remove();
    }
    li.remove();
    this.updateReceivedHeading();
    this.refresh();
    this.announce(t("client.removedNotice", { name }));
    this.focusAfterRemoval();
  }

  /** Removes a file of the list: stops its upload and destroys what the server holds of it. */
  private async removeItem(item: Item): Promise<void> {
    const wasActive = item.status !== "error";
    item.status = "removed";
    this.items.splice(this.items.indexOf(item), 1);
    item.xhr?.abort();
    item.row.remove();
    this.refresh();
    this.focusAfterRemoval();
    if (!wasActive) return;
    try {
      let id = item.mediaId;
      if (id === undefined && item.fingerprint !== undefined) {
        // A first chunk may have arrived without its answer: find it by the file's identity.
        const res = await fetch(this.base, {
          headers: { "x-csrf-token": this.options.csrf, accept: "application/json" },
        });
        const body = res.ok ? ((await res.json()) as { files: ServerUpload[] }) : { files: [] };
        const claimed = new Set(this.items.map((i) => i.mediaId));
        const fingerprint = item.fingerprint;
        id = body.files.find(
          (f) =>
            !claimed.has(f.id) &&
            isUnfinishedUploadOf(f, { size: item.file.size, totalChunks: item.totalChunks, fingerprint }),
        )?.id;
      }
      if (id !== undefined) await this.deleteOnServer(id);
      this.announce(t("client.removedNotice", { name: item.file.name }));
    } catch (err) {
      this.announce(t("client.removeFailed", { name: item.file.name, reason: (err as Error).message }));
    }
    void this.sync()
      .then(() => this.refresh())
      .catch(() => undefined);
  }

  /** Removes an unfinished upload left before a reload (or in another tab). */
  private async removeEarlier(upload: ServerUpload): Promise<void> {
    try {
      await this.deleteOnServer(upload.id);
    } catch (err) {
      this.announce(t("client.removeFailed", { name: upload.name, reason: (err as Error).message }));
      return;
    }
    this.unfinished = this.unfinished.filter((u) => u.id !== upload.id);
    this.refresh();
    this.announce(t("client.removedNotice", { name: upload.name }));
    this.focusAfterRemoval();
  }

  /** The rows of unfinished earlier uploads: "Choose this file again to continue" and Remove. */
  private paintEarlier(): void {
    const wanted = new Set(this.unfinished.map((u) => String(u.id)));
    for (const row of Array.from(this.ui.list.querySelectorAll<HTMLLIElement>("li[data-earlier-id]")))
      if (!wanted.has(row.dataset.earlierId ?? "")) row.remove();
    for (const upload of this.unfinished) {
      if (this.ui.list.querySelector(`li[data-earlier-id="${upload.id}"]`)) continue;
      const row = el("li", "fy-file");
      row.dataset.earlierId = String(upload.id);
      row.dataset.state = "unfinished";
      const info = el("div", "fy-file-info");
      const bar = el("progress", "fy-progress");
      bar.max = upload.total_chunks;
      bar.value = upload.received_chunks.length;
      bar.setAttribute("aria-label", t("client.progressLabel", { name: upload.name }));
      const state = t("client.unfinishedRow", {
        received: upload.received_chunks.length,
        total: upload.total_chunks,
      });
      info.append(
        el("p", "fy-file-name", upload.name),
        bar,
        el("p", "fy-muted", `${upload.size === null ? "" : `${formatBytes(upload.size)} · `}${state}`),
      );
      row.append(info);
      this.addRemoveButton(row, upload.name, () => void this.removeEarlier(upload));
      this.ui.list.prepend(row);
    }
  }

  /** "Received (2)", hidden while nothing is received. */
  private updateReceivedHeading(): void {
    const count = this.ui.received.children.length;
    this.ui.receivedHeading.textContent = t("client.received", { count });
    this.ui.receivedHeading.hidden = count === 0;
  }

  private announce(message: string): void {
    this.ui.status.textContent = message;
  }

  /** Adds files: refused ones are listed with the reason, the others queued. */
  add(files: File[]): void {
    for (const file of files) {
      const twin = this.items.find(
        (i) =>
          i.file.name === file.name && i.file.size === file.size && i.file.lastModified === file.lastModified,
      );
      const reason = twin ? t("client.duplicate", { name: file.name }) : refusal(file, this.options);
      const item = this.render(file);
      if (reason) {
        item.status = "error";
        item.message = reason;
        this.paint(item);
        this.announce(item.message);
        continue;
      }
      this.items.push(item);
    }
    this.refresh();
    void this.run();
  }

  private render(file: File): Item {
    const row = el("li", "fy-file");
    const info = el("div", "fy-file-info");
    info.append(el("p", "fy-file-name", file.name));
    const text = el("p", "fy-muted", formatBytes(file.size));
    const bar = el("progress", "fy-progress");
    bar.max = 100;
    bar.value = 0;
    bar.setAttribute("aria-label", t("client.progressLabel", { name: file.name }));
    info.append(bar, text);
    row.append(info);
    this.ui.list.append(row);
    const item: Item = {
      file,
      fingerprint: undefined,
      totalChunks: Math.max(1, Math.ceil(file.size / this.options.chunkBytes)),
      mediaId: undefined,
      received: new Set(),
      inFlight: 0,
      status: "queued",
      message: "",
      row,
      bar,
      text,
      remove: undefined as unknown as HTMLButtonElement,
      xhr: undefined,
    };
    item.remove = this.addRemoveButton(row, file.name, () => void this.removeItem(item));
    return item;
  }

  private sentBytes(item: Item): number {
    let bytes = 0;
    for (const n of item.received) bytes += this.chunkSize(item, n);
    return Math.min(item.file.size, bytes + item.inFlight);
  }

  private chunkSize(item: Item, n: number): number {
    const start = (n - 1) * this.options.chunkBytes;
    return Math.max(0, Math.min(this.options.chunkBytes, item.file.size - start));
  }

  private paint(item: Item): void {
    const pct =
      item.status === "done"
        ? 100
        : item.file.size === 0
          ? 0
          : Math.floor((this.sentBytes(item) / item.file.size) * 100);
    item.bar.value = pct;
    const label = (status: Status): string => {
      switch (status) {
        case "queued":
          return t("client.waiting");
        case "uploading":
          return t("client.uploading", { percent: pct });
        case "paused":
          return t("client.pausedAt", { percent: pct });
        case "retrying":
          return t("client.retryingAt", { percent: pct });
        case "done":
          return t("client.uploaded");
        case "error":
          return t("client.notUploaded");
        case "removed":
          return t("client.removed");
      }
    };
    item.text.textContent = `${formatBytes(item.file.size)} · ${item.message || label(item.status)}`;
    item.row.dataset.state = item.status;
  }

  private refresh(): void {
    const active = this.items.filter((i) => i.status !== "error");
    const total = active.reduce((s, i) => s + i.file.size, 0);
    const sent = active.reduce((s, i) => s + (i.status === "done" ? i.file.size : this.sentBytes(i)), 0);
    const pct =
      total === 0
        ? active.length > 0 && active.every((i) => i.status === "done")
          ? 100
          : 0
        : Math.floor((sent / total) * 100);
    this.ui.overall.hidden = active.length === 0;
    // A finished list needs no progress: the files show under Received.
    this.ui.overallBar.value = pct;
    const done = active.filter((i) => i.status === "done").length;
    const pace = this.pace(sent, total);
    const overall = t("client.overall", {
      done,
      count: active.length,
      sent: formatBytes(sent),
      total: formatBytes(total),
      percent: pct,
    });
    this.ui.overallText.textContent = pace ? `${overall} · ${pace}` : overall;
    const busy = this.busy();
    const hadFocus = document.activeElement === this.ui.pause || document.activeElement === this.ui.resume;
    this.ui.pause.hidden = this.paused || !busy;
    this.ui.resume.hidden = !this.paused || !busy;
    if (hadFocus && !busy) this.ui.input.focus();
    this.paintEarlier();
    if (this.ui.confirmEmpty)
      this.ui.confirmEmpty.hidden =
        this.ui.received.children.length > 0 || this.items.some((i) => i.status !== "error");
    this.ui.submit.setAttribute("aria-disabled", busy ? "true" : "false");
    this.ui.submitHint.textContent = busy
      ? t("client.uploadsInProgress")
      : this.unfinished.length > 0
        ? unfinishedNotice(this.unfinished)
        : t("client.submitHint");
    for (const item of this.items) this.paint(item);
  }

  /** Bytes sent over the last seconds, to tell the speed and the time left. */
  private samples: { at: number; sent: number }[] = [];

  /** "2.1 MB/s · about 3 min left" while uploading, from the last 5 seconds; "" otherwise. */
  private pace(sent: number, total: number): string {
    const uploading = !this.paused && this.items.some((i) => i.status === "uploading");
    if (!uploading) {
      this.samples = [];
      return "";
    }
    const now = performance.now();
    this.samples.push({ at: now, sent });
    while (this.samples.length > 2 && now - this.samples[0]!.at > 5000) this.samples.shift();
    const first = this.samples[0]!;
    const seconds = (now - first.at) / 1000;
    if (seconds < 1 || sent <= first.sent) return "";
    const rate = (sent - first.sent) / seconds;
    return `${t("client.speed", { rate: formatBytes(Math.round(rate)) })} · ${timeLeft((total - sent) / rate)}`;
  }

  private setPaused(paused: boolean): void {
    this.paused = paused;
    if (paused) {
      this.current?.abort();
      for (const i of this.items)
        if (i.status === "uploading" || i.status === "queued" || i.status === "retrying") i.status = "paused";
      this.announce(t("client.paused"));
      this.ui.resume.hidden = false;
      this.refresh();
      this.ui.resume.focus();
    } else {
      for (const i of this.items) if (i.status === "paused") i.status = "queued";
      this.announce(t("client.resumed"));
      this.refresh();
      this.ui.pause.focus();
      this.wakeRetry?.();
      void this.run();
    }
  }

  /** Reads the item's fingerprint; false, with the item failed, when the file cannot be read. */
  private async identify(item: Item): Promise<boolean> {
    try {
      item.fingerprint = await fingerprintOf(item.file, this.options.chunkBytes);
      return true;
    } catch {
      this.fail(item, t("client.unreadable"));
      return false;
    }
  }

  private fail(item: Item, message: string): void {
    item.status = "error";
    item.message = message;
    this.announce(t("client.fileError", { name: item.file.name, reason: message }));
    this.refresh();
  }

  /**
   * Asks the server what it holds and updates every item's received chunks: by media id for the
   * uploads this page started, else by the file's full identity (never by name alone).
   */
  private async sync(): Promise<void> {
    const res = await fetch(this.base, {
      headers: { "x-csrf-token": this.options.csrf, accept: "application/json" },
    });
    if (!res.ok) throw new HttpError(res.status, await errorText(res));
    const body = (await res.json()) as { files: ServerUpload[] };
    const claimed = new Set(this.items.map((i) => i.mediaId).filter((id) => id !== undefined));
    for (const item of this.items) {
      if (item.status === "done" || item.status === "error") continue;
      let server = item.mediaId !== undefined ? body.files.find((f) => f.id === item.mediaId) : undefined;
      const fingerprint = item.fingerprint;
      if (!server && item.mediaId === undefined && fingerprint !== undefined) {
        // A first chunk whose answer was lost, or an upload stopped in another tab or before a
        // reload: continued only if it is this very file.
        const file = { size: item.file.size, totalChunks: item.totalChunks, fingerprint };
        server = body.files.find((f) => !claimed.has(f.id) && isUnfinishedUploadOf(f, file));
      }
      if (!server && item.mediaId === undefined && fingerprint !== undefined) {
        const twin = body.files.find(
          (f) => f.state === "available" && f.fingerprint === fingerprint && f.name === item.file.name,
        );
        if (twin) {
          this.fail(item, t("client.alreadyUploaded"));
          continue;
        }
      }
      if (!server) continue;
      item.mediaId = server.id;
      claimed.add(server.id);
      item.received = new Set(server.received_chunks);
      if (server.state === "available") this.finish(item);
    }
    this.unfinished = body.files.filter((f) => f.state === "uploading" && !claimed.has(f.id));
  }

  private finish(item: Item): void {
    if (item.status === "done") return;
    item.status = "done";
    item.inFlight = 0;
    item.message = "";
    const li = el("li", "fy-file");
    const info = el("div", "fy-file-info");
    info.append(el("p", "fy-file-name", item.file.name), el("p", "fy-muted", formatBytes(item.file.size)));
    li.append(info);
    if (item.mediaId !== undefined) {
      const mediaId = item.mediaId;
      li.dataset.mediaId = String(mediaId);
      this.addRemoveButton(li, item.file.name, () => void this.removeReceived(li, mediaId, item.file.name));
    }
    // The row under Received has the Remove button from now on.
    item.remove.remove();
    this.ui.received.append(li);
    this.updateReceivedHeading();
    this.announce(t("client.uploadedNotice", { name: item.file.name }));
  }

  private async run(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      let synced = false;
      for (;;) {
        if (this.paused) break;
        const item = this.items.find(
          (i) => i.status === "queued" || i.status === "uploading" || i.status === "retrying",
        );
        if (!item) break;
        try {
          if (item.fingerprint === undefined) {
            if (!(await this.identify(item))) continue;
            // A newly identified file may continue an upload the server holds: ask again.
            synced = false;
          }
          if (!synced) {
            await this.sync();
            synced = true;
            if (item.status === "done") continue;
          }
          if (item.status !== "queued" && item.status !== "retrying" && item.status !== "uploading") continue;
          item.status = "uploading";
          item.message = "";
          this.refresh();
          await this.uploadItem(item);
          if (item.status === "uploading") this.finish(item);
          this.refresh();
        } catch (err) {
          if ((item.status as Status) === "removed") continue;
          if (this.paused) break;
          if (err instanceof HttpError && err.status !== 0 && err.status !== 429 && err.status < 500) {
            this.fail(item, err.message);
            continue;
          }
          item.status = "retrying";
          item.inFlight = 0;
          this.refresh();
          await this.backoff();
          synced = false;
        }
      }
    } finally {
      this.running = false;
      this.refresh();
      if (!this.busy() && this.items.length > 0)
        this.announce(this.unfinished.length > 0 ? unfinishedNotice(this.unfinished) : t("client.allDone"));
    }
  }

  private retries = 0;

  private backoff(): Promise<void> {
    this.retries += 1;
    const delay = Math.min(10_000, 500 * 2 ** Math.min(this.retries, 5));
    this.announce(t("client.connectionLost"));
    return new Promise((resolve) => {
      const timer = setTimeout(done, delay);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeRetry = done;
    });
  }

  private async uploadItem(item: Item): Promise<void> {
    for (let n = 1; n <= item.totalChunks; n++) {
      if (this.paused || item.status === "removed") return;
      if (item.received.has(n)) continue;
      const start = (n - 1) * this.options.chunkBytes;
      const blob = item.file.slice(start, start + this.options.chunkBytes);
      let answer: ServerUpload;
      if (item.mediaId === undefined) {
        const form = new FormData();
        form.append("name", item.file.name);
        form.append("content_type", item.file.type || "application/octet-stream");
        form.append("size", String(item.file.size));
        form.append("total_chunks", String(item.totalChunks));
        if (item.fingerprint !== undefined) form.append("fingerprint", item.fingerprint);
        form.append("current_chunk", String(n));
        form.append("file", blob, item.file.name);
        answer = await this.send(item, "POST", form);
      } else {
        // Later chunks are the raw body, their fields in the query string (ADR 0041); the
        // fingerprint goes with every chunk, so the server refuses it for any upload but this file's.
        const query = new URLSearchParams({ current_chunk: String(n) });
        if (item.fingerprint !== undefined) query.set("fingerprint", item.fingerprint);
        answer = await this.send(item, "PUT", blob, query);
      }
      if ((item.status as Status) === "removed") return;
      if (this.retries > 0) this.announce(t("client.connectionRestored", { name: item.file.name }));
      this.retries = 0;
      item.mediaId = answer.id;
      item.received = new Set(answer.received_chunks);
      item.received.add(n);
      item.inFlight = 0;
      if (answer.state === "available") return;
      this.refresh();
    }
  }

  /** Sends a first chunk's form by POST, or a later chunk's bytes by PUT with `query`. */
  private send(
    item: Item,
    method: "POST" | "PUT",
    body: FormData | Blob,
    query?: URLSearchParams,
  ): Promise<ServerUpload> {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      this.current = xhr;
      item.xhr = xhr;
      xhr.open(method, method === "POST" ? this.base : `${this.base}/${item.mediaId}?${query}`);
      if (!(body instanceof FormData)) xhr.setRequestHeader("content-type", "application/octet-stream");
      xhr.setRequestHeader("x-csrf-token", this.options.csrf);
      xhr.setRequestHeader("accept", "application/json");
      xhr.upload.onprogress = (e) => {
        item.inFlight = e.loaded;
        this.refresh();
      };
      xhr.onload = () => {
        this.current = undefined;
        item.xhr = undefined;
        if (xhr.status >= 200 && xhr.status < 300) resolve(JSON.parse(xhr.responseText) as ServerUpload);
        else reject(new HttpError(xhr.status, describeError(xhr.responseText, xhr.status)));
      };
      xhr.onerror = () => {
        this.current = undefined;
        item.xhr = undefined;
        reject(new HttpError(0, "network error"));
      };
      xhr.onabort = () => {
        this.current = undefined;
        item.xhr = undefined;
        reject(new HttpError(0, "aborted"));
      };
      xhr.send(body);
    });
  }
}

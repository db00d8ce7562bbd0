/**
 * Client entry of the signing step (served as /static/esign.js): shows the PDF with pdf.js (pages
 * rendered as they come near the viewport, dropped when far from it), lays the signer's fields over
 * it, lets the signer fill text and checkboxes, dates itself, adopts a typed or drawn signature
 * and initials, and posts the values as JSON in the finish form. Every text comes from the page's
 * data block (src/web/esign-signing-view.tsx); no inline script or style is needed (the positions
 * are set through the CSSOM, which the CSP allows).
 */
import {
  GlobalWorkerOptions,
  getDocument,
  type PDFDocumentProxy,
  type RenderTask,
} from "pdfjs-dist/legacy/build/pdf.mjs";
import type { MessageKey } from "../../shared/i18n/catalogues/en.js";
import {
  type FieldValue,
  SIGNING_DATA_ID,
  type SignatureValue,
  type SigningData,
  type SigningField,
  type SigningValues,
} from "./esign-data.js";
import { canvasSize, fitScale, initialsOf, toCssBox } from "./esign-geometry.js";
import { setPageMessages, t } from "./messages.js";
import { loadSignatureFont, SignaturePad, typedSignaturePng } from "./signature-pad.js";

type Mark = "signature" | "initials";

function readData(): SigningData | undefined {
  try {
    return JSON.parse(document.getElementById(SIGNING_DATA_ID)?.textContent ?? "null") ?? undefined;
  } catch {
    return undefined;
  }
}

/** The elements of the section, by their data-role. */
function roleOf<T extends HTMLElement>(scope: HTMLElement, name: string): T {
  const node = scope.querySelector<T>(`[data-role="${name}"]`);
  if (!node) throw new Error(`missing ${name}`);
  return node;
}

/** One page of the document: its box, canvas and field layer. */
interface PageSlot {
  number: number;
  element: HTMLDivElement;
  canvas: HTMLCanvasElement;
  layer: HTMLDivElement;
  /** Size in points, once known (until then the first page's). */
  size: { width: number; height: number } | undefined;
  /** CSS width the canvas was last rendered at (0: not rendered). */
  renderedWidth: number;
  /** CSS width of the render under way (0: none). */
  renderingWidth: number;
  near: boolean;
  task: RenderTask | undefined;
}

/** A field's overlay element and how to read its value. */
interface FieldControl {
  field: SigningField;
  element: HTMLElement;
  value(): FieldValue;
  /** What takes the focus, when the field does (dates do not: they fill themselves). */
  focusTarget: HTMLElement | undefined;
}

class SigningStep {
  private document: PDFDocumentProxy | undefined;
  private readonly slots: PageSlot[] = [];
  private readonly controls: FieldControl[] = [];
  private readonly adopted: Partial<Record<Mark, SignatureValue>> = {};
  private readonly applied = new Map<string, boolean>();
  private readonly pagesElement: HTMLElement;
  private readonly dialog: Dialog;
  private defaultSize = { width: 612, height: 792 };
  private lastWidth = 0;

  constructor(
    private readonly root: HTMLElement,
    private readonly data: SigningData,
  ) {
    this.pagesElement = roleOf(root, "pages");
    this.dialog = new Dialog(roleOf(root, "dialog"), data.signerName);
  }

  async start(): Promise<void> {
    const loading = roleOf(this.root, "loading");
    loading.hidden = false;
    void loadSignatureFont(this.data.assets.signatureFonts);
    this.wireForms();
    try {
      GlobalWorkerOptions.workerSrc = this.data.assets.worker;
      this.document = await getDocument({
        url: this.data.pdfUrl,
        cMapUrl: this.data.assets.cMaps,
        cMapPacked: true,
        standardFontDataUrl: this.data.assets.standardFonts,
        wasmUrl: this.data.assets.wasm,
        iccUrl: this.data.assets.iccs,
        enableXfa: false,
        stopAtErrors: false,
      }).promise;
      const first = await this.document.getPage(1);
      const viewport = first.getViewport({ scale: 1 });
      this.defaultSize = { width: viewport.width, height: viewport.height };
      await this.buildPages();
    } catch {
      loading.hidden = true;
      const error = roleOf(this.root, "error");
      error.textContent = t("signing.loadFailed");
      error.hidden = false;
      return;
    }
    loading.hidden = true;
    roleOf(this.root, "bar").hidden = false;
    this.refresh();
  }

  /** The page boxes, with the fields of each (pages that carry fields are measured first). */
  private async buildPages(): Promise<void> {
    const doc = this.document!;
    const withFields = new Set(this.data.fields.map((f) => f.page));
    for (let number = 1; number <= doc.numPages; number += 1) {
      const element = document.createElement("div");
      element.className = "fy-signing-page";
      element.setAttribute("role", "group");
      element.setAttribute("aria-label", t("signing.page", { page: number, pages: doc.numPages }));
      element.dataset.page = String(number);
      const canvas = document.createElement("canvas");
      canvas.setAttribute("aria-hidden", "true");
      const layer = document.createElement("div");
      layer.className = "fy-signing-fields";
      element.append(canvas, layer);
      let size: PageSlot["size"];
      if (withFields.has(number) || number === 1) {
        const viewport = (await doc.getPage(number)).getViewport({ scale: 1 });
        size = { width: viewport.width, height: viewport.height };
      }
      const slot: PageSlot = {
        number,
        element,
        canvas,
        layer,
        size,
        renderedWidth: 0,
        renderingWidth: 0,
        near: false,
        task: undefined,
      };
      this.slots.push(slot);
      this.pagesElement.append(element);
    }
    // Fields in reading order (top to bottom, then left to right): the tab order follows it.
    const ordered = [...this.data.fields].sort((a, b) => a.page - b.page || a.y - b.y || a.x - b.x);
    for (const field of ordered) {
      const slot = this.slots[field.page - 1];
      if (!slot) continue;
      const control = this.createControl(field);
      this.controls.push(control);
      slot.layer.append(control.element);
    }
    this.layout();
    new ResizeObserver(() => this.layout()).observe(this.pagesElement);
    const observer = new IntersectionObserver(
      (entries) => {
        for (const entry of entries) {
          const slot = this.slots[Number((entry.target as HTMLElement).dataset.page) - 1];
          if (!slot) continue;
          slot.near = entry.isIntersecting;
          if (slot.near) void this.render(slot);
          else this.release(slot);
        }
      },
      // A screen above and below: pages are ready before they scroll in.
      { rootMargin: "100% 0px" },
    );
    for (const slot of this.slots) observer.observe(slot.element);
  }

  /** The CSS width of a page: every page fills the column. */
  private columnWidth(): number {
    return this.slots[0]?.element.clientWidth ?? 0;
  }

  /** Sizes every page box to the column's width and places its fields; re-renders pages in view. */
  private layout(): void {
    const width = this.columnWidth();
    if (width === 0 || width === this.lastWidth) return;
    this.lastWidth = width;
    for (const slot of this.slots) {
      const size = slot.size ?? this.defaultSize;
      const scale = fitScale(width, size.width);
      slot.element.style.height = `${size.height * scale}px`;
      if (slot.near && Math.abs(slot.renderedWidth - width) > 1) void this.render(slot);
    }
    for (const control of this.controls) {
      const slot = this.slots[control.field.page - 1]!;
      const box = toCssBox(control.field, fitScale(width, (slot.size ?? this.defaultSize).width));
      const style = control.element.style;
      style.left = `${box.left}px`;
      style.top = `${box.top}px`;
      style.width = `${box.width}px`;
      style.height = `${box.height}px`;
      // Text fits its box: the typed text by height, a mark's "Sign" or "Initial" by width too.
      const type = control.field.type;
      const invitation = type === "signature" || type === "initials" ? this.invitation(type).length : 0;
      const byWidth = invitation > 0 ? box.width / (invitation * 0.62 + 1) : 18;
      style.fontSize = `${Math.max(8, Math.min(box.height * 0.62, byWidth, 18))}px`;
    }
  }

  private async render(slot: PageSlot): Promise<void> {
    const doc = this.document;
    const width = this.columnWidth();
    if (!doc || width === 0 || slot.renderedWidth === width || slot.renderingWidth === width) return;
    slot.renderingWidth = width;
    slot.task?.cancel();
    slot.task = undefined;
    try {
      const page = await doc.getPage(slot.number);
      // Superseded by a render at another width, or scrolled far away meanwhile.
      if (slot.renderingWidth !== width || !slot.near) return;
      const base = page.getViewport({ scale: 1 });
      if (!slot.size) {
        slot.size = { width: base.width, height: base.height };
        this.lastWidth = 0;
        this.layout();
      }
      const scale = fitScale(width, base.width);
      const size = canvasSize(width, base.height * scale, window.devicePixelRatio);
      const canvas = document.createElement("canvas");
      canvas.setAttribute("aria-hidden", "true");
      canvas.width = size.width;
      canvas.height = size.height;
      const task = page.render({ canvas, viewport: page.getViewport({ scale: scale * size.ratio }) });
      slot.task = task;
      await task.promise;
      if (slot.task !== task) return;
      slot.task = undefined;
      // Swapped in once drawn: a re-render at another width never shows a blank page.
      slot.canvas.replaceWith(canvas);
      slot.canvas = canvas;
      slot.renderedWidth = width;
      slot.element.dataset.rendered = "true";
    } catch {
      // Cancelled by a newer render or by scrolling away; a page that fails to draw stays blank.
    } finally {
      if (slot.renderingWidth === width) slot.renderingWidth = 0;
    }
  }

  /** Frees a far page's pixels (a long document would otherwise hold every page in memory). */
  private release(slot: PageSlot): void {
    slot.task?.cancel();
    slot.task = undefined;
    slot.renderingWidth = 0;
    if (slot.renderedWidth === 0) return;
    slot.canvas.width = 0;
    slot.canvas.height = 0;
    slot.renderedWidth = 0;
    delete slot.element.dataset.rendered;
  }

  private labelOf(field: SigningField): string {
    const label = field.label.trim() || t(`signing.field.${field.type}`);
    return field.required ? t("signing.fieldRequired", { label }) : label;
  }

  private createControl(field: SigningField): FieldControl {
    const label = this.labelOf(field);
    switch (field.type) {
      case "text": {
        const input = document.createElement("input");
        input.type = "text";
        input.className = "fy-signing-field fy-signing-text";
        input.maxLength = 500;
        input.setAttribute("aria-label", label);
        if (field.required) input.required = true;
        input.addEventListener("input", () => this.refresh());
        return { field, element: input, value: () => input.value, focusTarget: input };
      }
      case "checkbox": {
        // Inside a label, whose margin takes taps around a box that may be tiny on a phone.
        const wrapper = document.createElement("label");
        wrapper.className = "fy-signing-field fy-signing-check";
        const input = document.createElement("input");
        input.type = "checkbox";
        input.setAttribute("aria-label", label);
        if (field.required) input.required = true;
        input.addEventListener("change", () => this.refresh());
        wrapper.append(input);
        return { field, element: wrapper, value: () => input.checked, focusTarget: input };
      }
      case "date": {
        const now = new Date();
        const iso = `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, "0")}-${String(now.getDate()).padStart(2, "0")}`;
        const output = document.createElement("span");
        output.className = "fy-signing-field fy-signing-date";
        output.textContent = new Intl.DateTimeFormat(this.data.format, { dateStyle: "medium" }).format(now);
        output.setAttribute("aria-label", `${label}: ${output.textContent}`);
        output.setAttribute("role", "note");
        return { field, element: output, value: () => iso, focusTarget: undefined };
      }
      case "signature":
      case "initials": {
        const mark: Mark = field.type;
        const button = document.createElement("button");
        button.type = "button";
        button.className = `fy-signing-field fy-signing-mark fy-signing-${mark}`;
        button.setAttribute("aria-label", label);
        button.setAttribute("aria-pressed", "false");
        button.addEventListener("click", () => void this.toggleMark(field, button));
        this.showMark(field, button);
        return {
          field,
          element: button,
          value: () => (this.applied.get(field.id) ? (this.adopted[mark] ?? null) : null),
          focusTarget: button,
        };
      }
    }
  }

  /** Signs an empty field (adopting a mark first when there is none) or clears a signed one. */
  private async toggleMark(field: SigningField, button: HTMLButtonElement): Promise<void> {
    const mark = field.type as Mark;
    if (this.applied.get(field.id)) {
      this.applied.set(field.id, false);
    } else {
      if (!this.adopted[mark]) {
        const adopted = await this.dialog.open(mark, button);
        if (!adopted) return;
        this.adopted[mark] = adopted;
      }
      this.applied.set(field.id, true);
    }
    this.showMark(field, button);
    this.refresh();
  }

  /** Shows a mark field's state: the adopted image when signed, the invitation to sign when not. */
  private showMark(field: SigningField, button: HTMLButtonElement): void {
    const mark = field.type as Mark;
    const signed = this.applied.get(field.id) === true && this.adopted[mark] !== undefined;
    button.setAttribute("aria-pressed", String(signed));
    button.replaceChildren();
    if (signed) {
      const image = document.createElement("img");
      image.src = this.adopted[mark]!.image;
      image.alt = "";
      button.append(image);
    } else {
      const text = document.createElement("span");
      text.textContent = this.invitation(mark);
      button.append(text);
    }
  }

  /** What an empty mark field says ("Sign", "Initial"). */
  private invitation(mark: Mark): string {
    return t(mark === "signature" ? "signing.signHere" : "signing.initialHere");
  }

  /** Replaces the adopted mark of a kind; every field signed with it shows the new one. */
  private async change(mark: Mark, opener: HTMLElement): Promise<void> {
    const adopted = await this.dialog.open(mark, opener);
    if (!adopted) return;
    this.adopted[mark] = adopted;
    for (const control of this.controls)
      if (control.field.type === mark) this.showMark(control.field, control.element as HTMLButtonElement);
    this.refresh();
  }

  private isFilled(control: FieldControl): boolean {
    const value = control.value();
    if (typeof value === "string") return value.trim() !== "";
    if (typeof value === "boolean") return value;
    return value !== null;
  }

  /** Recounts the required fields left, and enables Finish when none is. */
  private refresh(): void {
    const left = this.controls.filter((c) => c.field.required && !this.isFilled(c)).length;
    roleOf(this.root, "status").textContent = t("signing.remaining", { count: left });
    roleOf<HTMLButtonElement>(this.root, "finish").disabled = left > 0;
    roleOf(this.root, "change-signature").hidden = this.adopted.signature === undefined;
    roleOf(this.root, "change-initials").hidden = this.adopted.initials === undefined;
    for (const control of this.controls)
      control.element.classList.toggle("fy-signing-filled", this.isFilled(control));
  }

  private wireForms(): void {
    const finishForm = roleOf<HTMLFormElement>(this.root, "finish-form");
    finishForm.addEventListener("submit", (e) => {
      const finish = roleOf<HTMLButtonElement>(this.root, "finish");
      if (this.controls.some((c) => c.field.required && !this.isFilled(c)) || finish.dataset.sent) {
        e.preventDefault();
        return;
      }
      const values: SigningValues = {};
      for (const control of this.controls) {
        const value = control.value();
        values[control.field.id] = typeof value === "string" ? value.trim() : value;
      }
      roleOf<HTMLInputElement>(this.root, "values").value = JSON.stringify(values);
      // One submission: a second press while the page is leaving does nothing.
      finish.dataset.sent = "true";
    });
    roleOf(this.root, "next").addEventListener("click", () => this.focusNext());
    const changeSignature = roleOf(this.root, "change-signature");
    changeSignature.addEventListener("click", () => void this.change("signature", changeSignature));
    const changeInitials = roleOf(this.root, "change-initials");
    changeInitials.addEventListener("click", () => void this.change("initials", changeInitials));
    // The reason is required by the form itself (it works without script); the script only
    // refuses a reason of spaces and says so in the page's language.
    const reason = roleOf<HTMLTextAreaElement>(this.root, "decline-reason");
    const checkReason = () =>
      reason.setCustomValidity(reason.value.trim() === "" ? t("signing.declineReasonMissing") : "");
    reason.addEventListener("input", checkReason);
    reason.addEventListener("invalid", checkReason);
    roleOf<HTMLFormElement>(this.root, "decline-form").addEventListener("submit", (e) => {
      checkReason();
      if (!reason.checkValidity()) {
        e.preventDefault();
        reason.reportValidity();
      }
    });
    checkReason();
  }

  /** Moves to the first required field left (else the first optional one, else Finish). */
  private focusNext(): void {
    const focusable = this.controls.filter((c) => c.focusTarget && !this.isFilled(c));
    const target = focusable.find((c) => c.field.required) ?? focusable[0];
    const element = target?.focusTarget ?? roleOf(this.root, "finish");
    element.scrollIntoView({ block: "center", behavior: "smooth" });
    element.focus({ preventScroll: true });
  }
}

/** The adopt-a-mark dialog: typed (with a live preview in the signature font) or drawn. */
class Dialog {
  private readonly pad: SignaturePad;
  private resolve: ((value: SignatureValue | undefined) => void) | undefined;
  private mark: Mark = "signature";
  private opener: HTMLElement | undefined;

  constructor(
    private readonly element: HTMLDialogElement,
    private readonly signerName: string,
  ) {
    this.pad = new SignaturePad(roleOf(element, "pad"), () => this.error(""));
    for (const radio of element.querySelectorAll<HTMLInputElement>('[data-role="method"]'))
      radio.addEventListener("change", () => this.showMethod());
    const typed = roleOf<HTMLInputElement>(element, "typed");
    typed.addEventListener("input", () => {
      roleOf(element, "typed-preview").textContent = typed.value;
      this.error("");
    });
    roleOf(element, "clear").addEventListener("click", () => this.pad.clear());
    roleOf(element, "cancel").addEventListener("click", () => element.close());
    roleOf(element, "adopt").addEventListener("click", () => void this.adopt());
    element.addEventListener("close", () => {
      this.resolve?.(undefined);
      this.resolve = undefined;
      this.opener?.focus();
    });
    window.addEventListener("resize", () => {
      if (element.open) this.pad.resize();
    });
  }

  /** Opens the dialog for `mark`; resolves with the adopted mark, or undefined when cancelled. */
  open(mark: Mark, opener: HTMLElement): Promise<SignatureValue | undefined> {
    this.mark = mark;
    this.opener = opener;
    const el = this.element;
    roleOf(el, "dialog-title").textContent = t(
      mark === "signature" ? "signing.adoptSignatureTitle" : "signing.adoptInitialsTitle",
    );
    roleOf(el, "typed-label").textContent = t(
      mark === "signature" ? "signing.typedName" : "signing.typedInitials",
    );
    roleOf(el, "draw-hint").textContent = t(
      mark === "signature" ? "signing.drawSignature" : "signing.drawInitials",
    );
    const typed = roleOf<HTMLInputElement>(el, "typed");
    typed.value = mark === "signature" ? this.signerName : initialsOf(this.signerName);
    typed.maxLength = mark === "signature" ? 80 : 6;
    roleOf(el, "typed-preview").textContent = typed.value;
    this.pad.clear();
    this.error("");
    el.showModal();
    this.showMethod();
    return new Promise((resolve) => {
      this.resolve = resolve;
    });
  }

  private method(): "typed" | "drawn" {
    return this.element.querySelector<HTMLInputElement>('[data-role="method"]:checked')?.value === "drawn"
      ? "drawn"
      : "typed";
  }

  private showMethod(): void {
    const drawn = this.method() === "drawn";
    roleOf(this.element, "typed-panel").hidden = drawn;
    roleOf(this.element, "drawn-panel").hidden = !drawn;
    this.error("");
    if (drawn) this.pad.resize();
  }

  private error(text: string): void {
    roleOf(this.element, "dialog-error").textContent = text;
  }

  private async adopt(): Promise<void> {
    let value: SignatureValue;
    if (this.method() === "typed") {
      const text = roleOf<HTMLInputElement>(this.element, "typed").value.trim();
      if (!text) {
        this.error(
          t(this.mark === "signature" ? "signing.typedNameMissing" : "signing.typedInitialsMissing"),
        );
        roleOf(this.element, "typed").focus();
        return;
      }
      value = { method: "typed", text, image: await typedSignaturePng(text) };
    } else {
      const image = this.pad.toPng();
      if (!image) {
        this.error(t("signing.drawingMissing"));
        return;
      }
      value = { method: "drawn", image };
    }
    const resolve = this.resolve;
    this.resolve = undefined;
    resolve?.(value);
    this.element.close();
  }
}

const root = document.querySelector<HTMLElement>("[data-signing]");
const data = readData();
if (root && data) {
  setPageMessages({
    locale: data.locale,
    format: data.format,
    messages: data.messages as Partial<Record<MessageKey, string>>,
  });
  void new SigningStep(root, data).start();
}

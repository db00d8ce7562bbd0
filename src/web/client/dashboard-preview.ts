/**
 * Live preview of the template editor: a form with `data-live-preview` re-submits itself through
 * its `data-preview-button` (which posts into the preview frame) shortly after the owner stops
 * typing, so the rendered email, or the syntax error with its line, follows the source; with
 * `data-preview-now` it does so once on load.
 */
const DELAY_MS = 700;

export function setUpLivePreview(): void {
  for (const form of document.querySelectorAll<HTMLFormElement>("form[data-live-preview]")) {
    const button = form.querySelector<HTMLButtonElement>("button[data-preview-button]");
    const status = document.getElementById("preview-status");
    if (!button) continue;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const refresh = () => {
      timer = undefined;
      form.requestSubmit(button);
      if (status) status.textContent = "Preview updated.";
    };
    form.addEventListener("input", () => {
      if (timer !== undefined) clearTimeout(timer);
      if (status) status.textContent = "";
      timer = setTimeout(refresh, DELAY_MS);
    });
    // After a refused save the frame shows what the editor now holds (the error at its line).
    if (form.dataset.previewNow !== undefined) form.requestSubmit(button);
  }
}

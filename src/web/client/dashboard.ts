/**
 * The dashboard's small client script: copy buttons. A button with `data-copy="<element id>"`
 * copies that element's text and says so in its `data-copy-status` live region; the template
 * editor's live preview (dashboard-preview.ts).
 */
import { setUpLivePreview } from "./dashboard-preview.js";

function setUp(): void {
  for (const button of document.querySelectorAll<HTMLButtonElement>("button[data-copy]")) {
    button.hidden = false;
    button.addEventListener("click", async () => {
      const source = document.getElementById(button.dataset.copy ?? "");
      const status = document.getElementById(button.dataset.copyStatus ?? "");
      if (!source) return;
      const text = source.textContent ?? "";
      let copied = false;
      try {
        await navigator.clipboard.writeText(text);
        copied = true;
      } catch {
        // Without clipboard permission: select the text so Ctrl+C copies it.
        const range = document.createRange();
        range.selectNodeContents(source);
        const selection = window.getSelection();
        selection?.removeAllRanges();
        selection?.addRange(range);
      }
      if (status)
        status.textContent = copied ? "Copied to the clipboard." : "Selected: press Ctrl+C to copy.";
    });
  }
}

setUp();
setUpLivePreview();

/**
 * The signing step of a recipient's session, server-rendered: the section the signing script
 * (src/web/client/esign.ts, served as /static/esign.js) mounts on. It holds the finish form (CSRF
 * field, `values` JSON filled by the script), the decline form (a reason, required; it works
 * without script), the adopt-a-signature dialog, a no-script note, and a JSON data block with the
 * PDF's URL, the signer's fields, the pdf.js asset URLs and the `signing.*` messages. A page that
 * shows it sends the CSP of `applySigningPageHeaders` (src/web/security-headers.ts).
 */
import type { VNode } from "preact";
import { CATALOGUES, formatLocale, type Locale, type Translator } from "../shared/i18n/i18n.js";
import { SIGNING_DATA_ID, type SigningData, type SigningField } from "./client/esign-data.js";
import { esignAssetUrls } from "./esign-assets.js";

export type {
  FieldType,
  FieldValue,
  SignatureValue,
  SigningField,
  SigningValues,
} from "./client/esign-data.js";
export { FIELD_TYPES } from "./client/esign-data.js";

/** What the signing step shows for one signer. */
export interface SigningViewProps {
  /** The page's language: every text, server-rendered and in the script, comes from it. */
  i18n: Translator;
  /** Where the script fetches the PDF (same origin; the session's cookie goes with it). */
  pdfUrl: string;
  /** This signer's fields (see SigningField for the units). */
  fields: SigningField[];
  /** The finish form's action: POST with the CSRF field and `values` (JSON of SigningValues). */
  actionUrl: string;
  /** The decline form's action: POST with the CSRF field and `reason` (required, at most 2000 characters). */
  declineUrl: string;
  /** The hidden CSRF field both forms carry. */
  csrfField: { name: string; value: string };
  /** The signer's name: greets them and fills the typed signature and initials. */
  signerName: string;
  /** The level of the section's heading (default 2: under the page's h1). */
  headingLevel?: 2 | 3;
}

/** The `signing.*` messages of `locale` (ICU, formatted by the script), for the data block. */
export function signingMessages(locale: Locale): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, text] of Object.entries(CATALOGUES[locale]))
    if (key.startsWith("signing.")) out[key] = text;
  return out;
}

/** JSON as the text of a `<script type="application/json">` element: nothing in it can close the element. */
function dataBlockJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** The signing step: document viewer, fields, finish and decline (see the module comment). */
export function SigningView(props: SigningViewProps): VNode {
  const { i18n, csrfField } = props;
  const { t } = i18n;
  const Heading = props.headingLevel === 3 ? "h3" : "h2";
  const data: SigningData = {
    pdfUrl: props.pdfUrl,
    fields: props.fields,
    signerName: props.signerName,
    assets: {
      worker: esignAssetUrls.worker,
      cMaps: esignAssetUrls.cMaps,
      standardFonts: esignAssetUrls.standardFonts,
      wasm: esignAssetUrls.wasm,
      iccs: esignAssetUrls.iccs,
      signatureFonts: esignAssetUrls.signatureFonts,
    },
    locale: i18n.locale,
    format: formatLocale(i18n.locale),
    messages: signingMessages(i18n.locale),
  };
  const csrf = <input type="hidden" name={csrfField.name} value={csrfField.value} />;
  return (
    <section class="fy-card fy-signing" id="signing" aria-labelledby="signing-heading" data-signing="">
      <link rel="stylesheet" href={esignAssetUrls.stylesheet} />
      <Heading id="signing-heading">{t("signing.heading")}</Heading>
      <p>{t("signing.intro", { name: props.signerName })}</p>
      <noscript>
        <p class="fy-alert fy-alert-error">{t("signing.noscript")}</p>
      </noscript>
      {/* Shown by the script once the document is open: without it nothing here can be signed. */}
      <div class="fy-signing-bar" data-role="bar" hidden>
        <p
          class="fy-signing-status"
          id="signing-status"
          data-role="status"
          role="status"
          aria-live="polite"
        />
        <div class="fy-signing-actions">
          <button type="button" class="fy-button fy-button-secondary" data-role="next">
            {t("signing.next")}
          </button>
          <form method="post" action={props.actionUrl} data-role="finish-form">
            {csrf}
            <input type="hidden" name="values" value="" data-role="values" />
            <button
              type="submit"
              class="fy-button"
              data-role="finish"
              disabled
              aria-describedby="signing-status"
            >
              {t("signing.finish")}
            </button>
          </form>
        </div>
      </div>
      <p class="fy-hint" data-role="loading" role="status" hidden>
        {t("signing.loading")}
      </p>
      <div class="fy-alert fy-alert-error" data-role="error" role="alert" hidden />
      <section class="fy-signing-pages" data-role="pages" aria-label={t("signing.document")} />
      {/* Out of the sticky bar, which stays one line high on a phone. */}
      <div class="fy-actions fy-signing-changes">
        <button type="button" class="fy-button fy-button-secondary" data-role="change-signature" hidden>
          {t("signing.changeSignature")}
        </button>
        <button type="button" class="fy-button fy-button-secondary" data-role="change-initials" hidden>
          {t("signing.changeInitials")}
        </button>
      </div>
      <details class="fy-signing-decline">
        <summary>{t("signing.declineSummary")}</summary>
        <form method="post" action={props.declineUrl} data-role="decline-form">
          {csrf}
          <div class="fy-field">
            <label for="signing-decline-reason">{t("signing.declineReason")}</label>
            <textarea
              id="signing-decline-reason"
              class="fy-textarea"
              name="reason"
              required
              maxLength={2000}
              aria-describedby="signing-decline-hint"
              data-role="decline-reason"
            />
            <p class="fy-hint" id="signing-decline-hint">
              {t("signing.declineHint")}
            </p>
          </div>
          <button type="submit" class="fy-button fy-button-secondary" data-role="decline">
            {t("signing.declineSubmit")}
          </button>
        </form>
      </details>
      <AdoptDialog i18n={i18n} />
      <script
        type="application/json"
        id={SIGNING_DATA_ID}
        dangerouslySetInnerHTML={{ __html: dataBlockJson(data) }}
      />
      <script type="module" src={esignAssetUrls.script} />
    </section>
  );
}

/** The dialog that adopts a signature or initials, typed or drawn (titled by the script per kind). */
function AdoptDialog(props: { i18n: Translator }): VNode {
  const { t } = props.i18n;
  return (
    <dialog class="fy-signing-dialog" data-role="dialog" aria-labelledby="signing-dialog-title">
      <h2 id="signing-dialog-title" data-role="dialog-title">
        {t("signing.adoptSignatureTitle")}
      </h2>
      <fieldset class="fy-signing-methods">
        <legend>{t("signing.method")}</legend>
        <label>
          <input type="radio" name="signing-method" value="typed" checked data-role="method" />{" "}
          {t("signing.type")}
        </label>
        <label>
          <input type="radio" name="signing-method" value="drawn" data-role="method" /> {t("signing.draw")}
        </label>
      </fieldset>
      <div data-role="typed-panel">
        <div class="fy-field">
          <label for="signing-typed" data-role="typed-label">
            {t("signing.typedName")}
          </label>
          <input
            id="signing-typed"
            class="fy-input"
            type="text"
            maxLength={80}
            autocomplete="off"
            data-role="typed"
          />
        </div>
        <p class="fy-hint" aria-hidden="true">
          {t("signing.preview")}
        </p>
        {/* Mirrors the name field for the eye; a screen reader reads the field itself. */}
        <div class="fy-signing-preview" data-role="typed-preview" aria-hidden="true" />
      </div>
      <div data-role="drawn-panel" hidden>
        <p class="fy-hint" id="signing-draw-hint" data-role="draw-hint">
          {t("signing.drawSignature")}
        </p>
        <canvas
          class="fy-signing-pad"
          data-role="pad"
          role="img"
          aria-label={t("signing.drawArea")}
          aria-describedby="signing-draw-hint"
        />
        <button type="button" class="fy-button fy-button-secondary" data-role="clear">
          {t("signing.clear")}
        </button>
      </div>
      <p class="fy-hint">{t("signing.adoptNote")}</p>
      <p class="fy-signing-error" data-role="dialog-error" role="alert" />
      <div class="fy-actions">
        <button type="button" class="fy-button" data-role="adopt">
          {t("signing.adopt")}
        </button>
        <button type="button" class="fy-button fy-button-secondary" data-role="cancel">
          {t("signing.cancel")}
        </button>
      </div>
    </dialog>
  );
}

import type { VNode } from "preact";
import type { MessageKey, Translator } from "../../../shared/i18n/i18n.js";
import { Layout } from "../../../web/layout.js";
import type { PresentedVerification } from "../verify-document.presenter.js";

/** A problem with the upload, shown above the form. */
export type VerifyNotice = Extract<
  MessageKey,
  | "verifyDocument.errorMissing"
  | "verifyDocument.errorNotPdf"
  | "verifyDocument.errorTooLarge"
  | "verifyDocument.errorForm"
  | "verifyDocument.errorBusy"
  | "verifyDocument.errorTooMany"
>;

function authenticationWords(i18n: Translator, methods: string[]): string {
  const known = new Set(["link", "two_factor_code", "reverse_authentication"]);
  return methods.map((m) => (known.has(m) ? i18n.t(`verifyDocument.auth.${m}` as MessageKey) : m)).join(", ");
}

/** The upload form (multipart, CSRF token first so it precedes the file in the body). */
function UploadForm(props: { i18n: Translator; csrf: string; again: boolean }): VNode {
  const { t } = props.i18n;
  return (
    <form method="post" action="/verify/document" enctype="multipart/form-data">
      <input type="hidden" name="csrf_token" value={props.csrf} />
      <div class="fy-field">
        <label for="verify-file">{t("verifyDocument.fileLabel")}</label>
        <input
          id="verify-file"
          class="fy-input"
          type="file"
          name="document"
          accept="application/pdf,.pdf"
          required
          aria-describedby="verify-file-hint"
        />
        <p class="fy-hint" id="verify-file-hint">
          {t("verifyDocument.fileHint")}
        </p>
      </div>
      <button type="submit" class="fy-button">
        {props.again ? t("verifyDocument.another") : t("verifyDocument.submit")}
      </button>
    </form>
  );
}

function Result(props: { i18n: Translator; result: PresentedVerification }): VNode {
  const { i18n, result } = props;
  const { t } = i18n;
  const verdict = result.sealed_by_ferry
    ? result.unchanged
      ? { kind: "success", text: t("verifyDocument.valid") }
      : { kind: "error", text: t("verifyDocument.changed") }
    : { kind: "error", text: t("verifyDocument.notSealed") };
  return (
    <section class="fy-card" aria-labelledby="verify-result-heading">
      <h2 id="verify-result-heading">{t("verifyDocument.resultHeading")}</h2>
      <p class={`fy-alert fy-alert-${verdict.kind}`} role="status" data-verdict={result.verdict}>
        {verdict.text}
      </p>
      <dl class="fy-details">
        {result.title ? (
          <>
            <dt>{t("verifyDocument.document")}</dt>
            <dd>{result.title}</dd>
          </>
        ) : null}
        {result.document_id ? (
          <>
            <dt>{t("verifyDocument.documentId")}</dt>
            <dd>{result.document_id}</dd>
          </>
        ) : null}
        {result.sealed_at ? (
          <>
            <dt>{t("verifyDocument.sealedAt")}</dt>
            <dd>
              <time datetime={result.sealed_at}>{i18n.date(result.sealed_at)}</time>
            </dd>
          </>
        ) : null}
        {result.original_sha256 ? (
          <>
            <dt>{t("verifyDocument.originalHash")}</dt>
            <dd>
              <code>{result.original_sha256}</code>
            </dd>
          </>
        ) : null}
        <dt>{t("verifyDocument.fileHash")}</dt>
        <dd>
          <code>{result.sha256}</code>
        </dd>
      </dl>
      {result.signers.length > 0 ? (
        <>
          <h3>{t("verifyDocument.signersHeading")}</h3>
          {result.unchanged ? null : <p>{t("verifyDocument.changedSigners")}</p>}
          {result.signers.map((signer) => (
            <dl class="fy-details">
              <dt>{t("verifyDocument.signerName")}</dt>
              <dd>
                <strong>{signer.name}</strong>
              </dd>
              <dt>{t("verifyDocument.signerEmail")}</dt>
              <dd>{signer.email}</dd>
              <dt>{t("verifyDocument.signerRole")}</dt>
              <dd>{signer.role}</dd>
              <dt>{t("verifyDocument.signerIdentified")}</dt>
              <dd>{authenticationWords(i18n, signer.authentication)}</dd>
              <dt>{t("verifyDocument.signedAt")}</dt>
              <dd>
                {signer.signed_at ? (
                  <time datetime={signer.signed_at}>{i18n.date(signer.signed_at)}</time>
                ) : (
                  "—"
                )}
              </dd>
            </dl>
          ))}
        </>
      ) : null}
    </section>
  );
}

/** The verify page: the form, and the result of the file just checked or a problem with it. */
export function VerifyDocumentPage(props: {
  i18n: Translator;
  sandbox: boolean;
  csrf: string;
  result?: PresentedVerification | undefined;
  notice?: VerifyNotice | undefined;
}): VNode {
  const { i18n } = props;
  const { t } = i18n;
  return (
    <Layout
      title={t("verifyDocument.title")}
      sandbox={props.sandbox}
      brandName="Ferry"
      footer={t("verifyDocument.privacy")}
      i18n={i18n}
    >
      {props.result ? <Result i18n={i18n} result={props.result} /> : null}
      <section class="fy-card" aria-labelledby="verify-heading">
        <h1 id="verify-heading">{t("verifyDocument.heading")}</h1>
        <p>{t("verifyDocument.intro")}</p>
        <p class="fy-muted">{t("verifyDocument.privacy")}</p>
        {props.notice ? (
          <p class="fy-alert fy-alert-error" role="alert">
            {t(props.notice)}
          </p>
        ) : null}
        <UploadForm i18n={i18n} csrf={props.csrf} again={props.result !== undefined} />
      </section>
    </Layout>
  );
}

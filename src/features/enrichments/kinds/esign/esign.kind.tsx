/**
 * The `esign` kind (ADR 0076, ADR 0071): the owner names a PDF (a media id, or a template's) checked
 * by the PDF engine, signers (recipients of the container, with a role and an order) and the fields
 * each role fills (signature, initials, date, text, checkbox; page and box). Signers sign in order;
 * each signature moves the status (`viewed`, `partially_signed`) until the last one (`sealing`: the
 * seal job stamps the fields and makes the sealed PDF, then `signed`); a decline or the owner's void
 * ends the step. The session step shows the ESIGN consent (recorded in the consent ledger) before
 * anything else, then the signing view over the document (served read-only at
 * `<stepBase>files/document.pdf`, ADR 0073); the server checks every posted value (esign.values.ts).
 * Once sealed, each signer downloads their copy at `<stepBase>files/sealed.pdf`.
 */
import { PDF } from "@libpdf/core";
import type { VNode } from "preact";
import { Type } from "typebox";
import { DocuSignCredentialsSchema } from "../../../../adapters/esign/docusign-credentials.js";
import { displayedSize } from "../../../../pdf/index.js";
import { AppError, unprocessable, ValidationError } from "../../../../shared/errors.js";
import { en, type MessageKey } from "../../../../shared/i18n/catalogues/en.js";
import type { Translator } from "../../../../shared/i18n/i18n.js";
import { type SigningField, SigningView } from "../../../../web/esign-signing-view.js";
import {
  type Disclosure,
  type EnrichmentKind,
  type EnrichmentView,
  type StepActResult,
  type StepContext,
  type StepServices,
  StepStartingError,
} from "../../enrichment-kind.js";
import { checkDocument } from "./esign.document.js";
import {
  checkRoles,
  type EsignField,
  type EsignPayload,
  type EsignResult,
  type EsignSigner,
  nextSigner,
  readEsignPayload,
  readFields,
  resultOf,
  signerStates,
} from "./esign.model.js";
import { esignRoutes, esignSandboxRoutes } from "./esign.routes.js";
import { EsignField as Field } from "./esign.schemas.js";
import { EsignSealJob, esignJobs } from "./esign.seal.js";
import { readSigningValues } from "./esign.values.js";
import { isEsignVendor, vendorSignerName } from "./esign.vendor.js";
import { findTemplate } from "./esign-templates.repository.js";
import { docuSignSettingsProblem } from "./providers/docusign-settings.js";

export const ESIGN_STATUSES = [
  "pending",
  "viewed",
  "partially_signed",
  "sealing",
  "signed",
  "declined",
  "voided",
  "expired",
] as const;

/**
 * The ESIGN Act §101(c) consumer consent shown before the first signature, in English; the page
 * shows it in the recipient's language (`esignConsent`), and the ledger records the text shown.
 */
export const ESIGN_CONSENT: Disclosure = {
  id: "esign_consumer_consent",
  version: "2026-11-28",
  text: en["esign.consentText"],
};

/** The consent as shown in the page's language (same id and version; the text's hash differs). */
export function esignConsent(i18n: Translator): Disclosure {
  return { ...ESIGN_CONSENT, text: i18n.t("esign.consentText") };
}

const Signer = Type.Object(
  {
    recipient: Type.Integer({ description: "A recipient of the container (422 otherwise)." }),
    role: Type.String({
      minLength: 1,
      maxLength: 64,
      description: "The role whose fields this signer fills.",
    }),
    order: Type.Integer({ minimum: 1, description: "Signing order; a later signer waits for earlier ones." }),
  },
  { additionalProperties: false },
);

const PresentedSigner = Type.Object({
  recipient: Type.Integer(),
  role: Type.String(),
  order: Type.Integer(),
  status: Type.Union([
    Type.Literal("waiting"),
    Type.Literal("ready"),
    Type.Literal("signed"),
    Type.Literal("declined"),
  ]),
  signed_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
  declined_reason: Type.Union([Type.String(), Type.Null()]),
});

/** Where a recipient stands on the step page. */
type Stage =
  | { kind: "closed" }
  | { kind: "stranger" }
  | { kind: "done" }
  | { kind: "waiting"; role: string }
  | { kind: "consent"; me: EsignSigner }
  | { kind: "sign"; me: EsignSigner };

function stageOf(view: EnrichmentView<EsignPayload>, recipientId: number): Stage {
  const result = resultOf(view.result);
  const me = view.payload.signers.find((s) => s.recipient === recipientId);
  if (me && result.signed[String(me.recipient)]) return { kind: "done" };
  if (view.state !== "pending") return { kind: "closed" };
  if (!me) return { kind: "stranger" };
  const next = nextSigner(view.payload, result);
  if (next && next.recipient !== me.recipient) return { kind: "waiting", role: next.role };
  if (!result.consented[String(me.recipient)]) return { kind: "consent", me };
  return { kind: "sign", me };
}

/**
 * The page sizes of a PDF as a viewer shows them (the engine's: CropBox, after /Rotate), or
 * undefined when it does not load.
 */
async function pageSizes(bytes: Buffer): Promise<{ width: number; height: number }[] | undefined> {
  try {
    const pdf = await PDF.load(new Uint8Array(bytes));
    return pdf.getPages().map((page) => displayedSize(page));
  } catch {
    return undefined;
  }
}

/**
 * The signer's fields as the signing view takes them: the API's boxes have a bottom-left origin,
 * the view's a top-left one (as a viewer shows the page), the same conversion the seal makes for the
 * PDF engine (`toPlacement`), over the same page sizes.
 */
function signingFields(
  fields: EsignField[],
  sizes: { width: number; height: number }[],
): SigningField[] | undefined {
  const out: SigningField[] = [];
  for (const f of fields) {
    const size = sizes[f.page - 1];
    if (!size) return undefined;
    out.push({
      id: f.name,
      type: f.type,
      page: f.page,
      x: f.x,
      y: Math.max(0, size.height - f.y - f.height),
      width: f.width,
      height: f.height,
      required: f.required !== false,
      label: "",
    });
  }
  return out;
}

function Notice(props: { id: string; title: string; text: string; extra?: string | undefined }): VNode {
  return (
    <div class="fy-esign-notice" id={props.id}>
      <h2>{props.title}</h2>
      <p>{props.text}</p>
      {props.extra ? <p>{props.extra}</p> : null}
    </div>
  );
}

function ConsentForm(props: { i18n: Translator; csrf: string; action: string }): VNode {
  const { t } = props.i18n;
  return (
    <form method="post" action={props.action} class="fy-esign-consent" id="esign-consent">
      <input type="hidden" name="csrf_token" value={props.csrf} />
      <input type="hidden" name="action" value="consent" />
      <h2>{t("esign.consentHeading")}</h2>
      <p>{t("esign.consentText")}</p>
      <button type="submit" class="fy-button">
        {t("esign.consentAgree")}
      </button>
    </form>
  );
}

/** The step page's body for this recipient (the signing view once it is their turn and they consented). */
async function StepBody(ctx: StepContext<EsignPayload>, services: StepServices): Promise<VNode> {
  const view = ctx.feature;
  const { t } = ctx.i18n;
  const stage = stageOf(view, ctx.session.recipientId);
  switch (stage.kind) {
    case "done":
      return (
        <div class="fy-esign-notice" id="esign-done">
          <h2>{t("esign.doneTitle")}</h2>
          <p>{t("esign.done")}</p>
          {resultOf(view.result).sealed_document !== undefined ? (
            <p>
              <a id="esign-sealed-copy" href={`${ctx.stepBase}files/${SEALED_NAME}`} download>
                {t("esign.sealedCopy")}
              </a>
            </p>
          ) : view.status === "sealing" ? (
            <p id="esign-sealing">{t("esign.sealing")}</p>
          ) : null}
        </div>
      );
    case "closed": {
      const declined = resultOf(view.result).declined;
      return (
        <Notice
          id="esign-closed"
          title={statusText(view.status, ctx.i18n)}
          text={t("esign.closed", { status: statusText(view.status, ctx.i18n) })}
          extra={
            view.status === "declined" && declined
              ? t("esign.declinedBy", { reason: declined.reason })
              : undefined
          }
        />
      );
    }
    case "stranger":
      return <p id="esign-stranger">{t("esign.notSigner")}</p>;
    case "waiting":
      return (
        <Notice
          id="esign-waiting"
          title={t("esign.waitingTitle")}
          text={t("esign.waiting", { role: stage.role })}
        />
      );
    case "consent":
      return <ConsentForm i18n={ctx.i18n} csrf={ctx.csrf} action={`${ctx.stepBase}act`} />;
    case "sign": {
      const bytes = await documentOf(view, services);
      const sizes = bytes && (await pageSizes(bytes));
      const fields =
        sizes &&
        signingFields(
          view.payload.fields.filter((f) => f.role === stage.me.role),
          sizes,
        );
      if (!fields) return <p id="esign-no-document">{t("esign.noDocument")}</p>;
      return (
        <SigningView
          i18n={ctx.i18n}
          pdfUrl={`${ctx.stepBase}files/${DOCUMENT_NAME}`}
          fields={fields}
          actionUrl={`${ctx.stepBase}act`}
          declineUrl={`${ctx.stepBase}act`}
          csrfField={{ name: "csrf_token", value: ctx.csrf }}
          signerName={ctx.session.recipientName}
          headingLevel={2}
        />
      );
    }
  }
}

/** The file name the step serves its document under (`<stepBase>files/document.pdf`). */
const DOCUMENT_NAME = "document.pdf";
/** The file name the step serves a signer's copy of the sealed PDF under, once sealed. */
const SEALED_NAME = "sealed.pdf";

/** The bytes of the step's document, or undefined when it has none or it cannot be read. */
async function documentOf(
  view: EnrichmentView<EsignPayload>,
  services: StepServices,
): Promise<Buffer | undefined> {
  if (view.payload.document === null) return undefined;
  try {
    return await services.media.read(view.accountId, view.payload.document);
  } catch (error) {
    // Removed, still uploading or too large: the page says the document is not available.
    if (error instanceof AppError && error.status < 500) return undefined;
    throw error;
  }
}

function statusText(status: string, i18n: Translator): string {
  const key = `esign.status.${status}`;
  return key in en ? i18n.t(key as MessageKey) : status;
}

/** The longest reason to decline, in characters (the decline form takes as much). */
const REASON_MAX = 2000;

/** A vendor's name as the step page says it. */
function providerName(provider: string): string {
  return provider === "docusign" ? "DocuSign" : provider;
}

/** True when the step's signers sign at a vendor's page (DocuSign) rather than in Ferry's own view. */
const atVendor = (view: EnrichmentView<EsignPayload>) => view.provider !== "local";

/**
 * The step page of a step signed at a vendor (DocuSign) while it is the recipient's turn: one
 * button to the vendor's signing page (the vendor shows its own consumer disclosure), and once they
 * came back, that the vendor's confirmation is awaited.
 */
function VendorStepBody(props: { ctx: StepContext<EsignPayload>; me: EsignSigner }): VNode {
  const { ctx, me } = props;
  const { t } = ctx.i18n;
  const provider = providerName(ctx.feature.provider);
  const back = resultOf(ctx.feature.result).returned?.[String(me.recipient)];
  return (
    <div id="esign-vendor">
      {back ? (
        <p class="fy-notice">{t("esign.vendor.back", { provider })}</p>
      ) : (
        <p>{t("esign.vendor.intro", { provider })}</p>
      )}
      <form method="post" action={`${ctx.stepBase}act`}>
        <input type="hidden" name="csrf_token" value={ctx.csrf} />
        <input type="hidden" name="action" value="sign" />
        <button type="submit" class="fy-button fy-button-primary">
          {back ? t("esign.vendor.signAgain", { provider }) : t("esign.vendor.sign", { provider })}
        </button>
      </form>
    </div>
  );
}

/**
 * The act of a vendor step: the first click creates the envelope (the document read from the
 * account's media, every signer embedded); every click asks for a fresh signing URL, which the
 * browser is sent to and which Ferry never stores.
 */
async function vendorAct(
  ctx: StepContext<EsignPayload>,
  form: Record<string, string>,
  services: StepServices,
): Promise<StepActResult> {
  const view = ctx.feature;
  const { t } = ctx.i18n;
  const me = view.payload.signers.find((s) => s.recipient === ctx.session.recipientId);
  if (!me) return { error: t("esign.notSigner"), status: 403 };
  if (form.action !== "sign") throw ValidationError.field("action", "Unknown action.");
  if (resultOf(view.result).signed[String(me.recipient)])
    return { error: t("esign.error.signedAlready"), status: 409 };
  const notYourTurn = { error: t("esign.error.notYourTurn"), status: 409 };
  try {
    if (!view.providerRef) {
      if (view.payload.document === null) return { error: t("esign.noDocument"), status: 422 };
      const bytes = await services.media.read(view.accountId, view.payload.document);
      const next = await services.start({
        files: [{ name: `${view.title || "Document"}.pdf`, contentType: "application/pdf", bytes }],
      });
      return next.type === "redirect" ? { redirect: next.url } : notYourTurn;
    }
    const provider = await services.provider();
    if (!isEsignVendor(provider)) return { error: t("esign.error.noProvider"), status: 422 };
    const url = await provider.signingUrl(
      view.providerRef,
      { recipient: me.recipient, name: vendorSignerName(ctx.session.recipientName, me.order) },
      services.returnLink(),
    );
    return { redirect: url };
  } catch (error) {
    if (error instanceof StepStartingError) return { error: t("esign.error.starting"), status: 409 };
    if (error instanceof AppError) {
      if (error.status === 409) return notYourTurn;
      return { error: error.detail, status: error.status };
    }
    throw error;
  }
}

/** The esign kind's descriptor. */
export const esignKind: EnrichmentKind<EsignPayload> = {
  name: "esign",
  module: "esign",
  resource: "esign",
  schemaName: "Esign",
  summary: "Have recipients sign a PDF, in order, sealed by Ferry",
  statuses: ESIGN_STATUSES,
  initialStatus: "pending",
  finalStatuses: ["signed", "declined", "voided"],
  expiredStatus: "expired",
  createFields: {
    template: Type.Optional(
      Type.Union([Type.Integer(), Type.Null()], { description: "A signing template's id." }),
    ),
    document: Type.Optional(
      Type.Union([Type.Integer(), Type.Null()], { description: "A media id of the PDF to sign." }),
    ),
    signers: Type.Array(Signer, { minItems: 1, maxItems: 20 }),
    fields: Type.Array(Field, { maxItems: 500 }),
  },
  presentedFields: {
    template: Type.Union([Type.Integer(), Type.Null()]),
    document: Type.Union([Type.Integer(), Type.Null()]),
    signers: Type.Array(PresentedSigner),
    fields: Type.Array(Field),
    voided_reason: Type.Union([Type.String(), Type.Null()]),
    sealed_document: Type.Union([Type.Integer(), Type.Null()], {
      description: "The media id of the sealed PDF once every signer signed.",
    }),
  },
  readPayload: (body, ctx) => readEsignPayload(body, ctx),
  async prepareCreate(payload, ctx) {
    let document = payload.document as number | null;
    let fields: EsignField[] = payload.fields;
    if (payload.template !== null) {
      const template = await findTemplate(ctx.db, ctx.accountId, payload.template);
      if (!template) throw unprocessable(`Template ${payload.template} is not a template of this account.`);
      document = template.document;
      const roles = new Set(payload.signers.map((s) => s.role));
      if (fields.length === 0)
        fields = readFields(JSON.parse(template.fields), new Set(JSON.parse(template.roles)));
      const missing = (JSON.parse(template.roles) as string[]).find((r) => !roles.has(r));
      if (missing) throw unprocessable(`The template's role "${missing}" has no signer.`);
      checkRoles(fields, roles);
    }
    const checked = await checkDocument(ctx.media, ctx.pdf, ctx.accountId, document as number, fields);
    return { ...payload, document, fields, pages: checked.pages, document_sha256: checked.sha256 };
  },
  async afterStatus(view, queue) {
    if (view.status === "sealing")
      await queue.enqueue(EsignSealJob, { feature: view.id, account: view.accountId });
  },
  async checkCreate(payload, ctx) {
    const ids = new Set(await ctx.containerRecipientIds());
    const stranger = payload.signers.find((s) => !ids.has(s.recipient));
    if (stranger) throw unprocessable(`Signer ${stranger.recipient} is not a recipient of the container.`);
    if (ctx.provider !== "local" && payload.document === null)
      throw unprocessable(
        `The account signs through ${ctx.provider}, which needs the PDF to send: give \`document\`.`,
      );
  },
  present(view) {
    const result = resultOf(view.result);
    return {
      template: view.payload.template,
      document: view.payload.document,
      signers: signerStates(view.payload, result),
      fields: view.payload.fields,
      voided_reason: result.voided_reason ?? null,
      sealed_document: result.sealed_document ?? null,
    };
  },
  // Signers' IP addresses, browsers and marks: personal data, sealed at rest.
  sensitiveResult: true,
  retentionDays: (config) => (config.ESIGN_RETENTION_DAYS > 0 ? config.ESIGN_RETENTION_DAYS : null),
  providers: {
    local: {
      id: "local",
      credentials: {},
      load: async () => (await import("./providers/local.js")).createLocalEsign,
    },
    docusign: {
      id: "docusign",
      testModeOnly: true,
      credentials: DocuSignCredentialsSchema.properties,
      check: (settings) => docuSignSettingsProblem(settings),
      load: async () => (await import("./providers/docusign.js")).createDocuSignEsign,
    },
  },
  async settle({ feature, outcome, fetched, provider, media }) {
    if (!isEsignVendor(provider) || !feature.providerRef) return outcome;
    // A webhook is a trigger: the envelope's status fetched from the vendor is the truth.
    const truth = fetched ? outcome : await provider.status(feature.providerRef);
    const current = resultOf(feature.result);
    const vendor = resultOf(truth.result ?? null);
    const merged: EsignResult = { ...current, signed: { ...current.signed, ...vendor.signed } };
    if (vendor.declined) merged.declined = vendor.declined;
    if (vendor.voided_reason && current.voided_reason === undefined)
      merged.voided_reason = vendor.voided_reason;
    if (truth.status === "signed" && truth.final && current.sealed_document === undefined) {
      const bytes = await provider.signedPdf(feature.providerRef);
      merged.sealed_document = await media.store(feature as EnrichmentView, {
        name: "signed.pdf",
        contentType: "application/pdf",
        bytes,
      });
    }
    return { ...truth, result: merged as unknown as Record<string, unknown> };
  },
  session: {
    summary: (view, i18n) =>
      atVendor(view) &&
      view.state === "pending" &&
      Object.keys(resultOf(view.result).returned ?? {}).length > 0
        ? i18n.t("esign.vendor.awaiting", { provider: providerName(view.provider) })
        : statusText(view.status, i18n),
    actionLabel: (view, i18n) =>
      atVendor(view)
        ? i18n.t("esign.vendor.sign", { provider: providerName(view.provider) })
        : i18n.t("esign.action"),
    render: (ctx, services) => {
      // At a vendor, a signer whose turn it is gets the way there (no Ferry consent: the vendor
      // shows its own); every other stage reads as for Ferry's own steps.
      const stage = stageOf(ctx.feature, ctx.session.recipientId);
      if (atVendor(ctx.feature) && (stage.kind === "consent" || stage.kind === "sign"))
        return <VendorStepBody ctx={ctx} me={stage.me} />;
      return StepBody(ctx, services);
    },
    signingPage: (ctx) =>
      !atVendor(ctx.feature) && stageOf(ctx.feature, ctx.session.recipientId).kind === "sign",
    async formActionOrigins(view, provider) {
      if (!atVendor(view) || view.state !== "pending") return [];
      const vendor = await provider();
      return isEsignVendor(vendor) ? vendor.origins() : [];
    },
    async returned(ctx, services) {
      // Coming back from the vendor's page completes nothing: it is recorded, the vendor confirms.
      const view = ctx.feature;
      const me = view.payload.signers.find((s) => s.recipient === ctx.session.recipientId);
      if (!atVendor(view) || !me || view.state !== "pending") return;
      const result = resultOf(view.result);
      await services.setStatus(view.status, {
        result: {
          ...result,
          returned: { ...result.returned, [String(me.recipient)]: services.now() },
        } as unknown as Record<string, unknown>,
        auditValue: `esign signer back from ${view.provider}, awaiting its confirmation`,
      });
    },
    async asset(ctx, name, services) {
      // Signers only: the document while the step is open, once they accepted the consent; their
      // copy of the sealed PDF once it is sealed. Nobody else, nothing else.
      const me = ctx.feature.payload.signers.find((s) => s.recipient === ctx.session.recipientId);
      if (!me) return undefined;
      const result = resultOf(ctx.feature.result);
      if (name === SEALED_NAME) {
        if (result.sealed_document === undefined) return undefined;
        try {
          const bytes = await services.media.read(ctx.feature.accountId, result.sealed_document);
          return { type: "application/pdf", body: bytes, filename: `signed-${ctx.feature.id}.pdf` };
        } catch (error) {
          // Removed (destroyed at retention end): nothing to serve.
          if (error instanceof AppError && error.status < 500) return undefined;
          throw error;
        }
      }
      // The document is shown by Ferry's own signing view only; a vendor shows it on its page.
      if (name !== DOCUMENT_NAME || atVendor(ctx.feature) || ctx.feature.state !== "pending")
        return undefined;
      if (!result.consented[String(me.recipient)]) return undefined;
      const bytes = await documentOf(ctx.feature, services);
      return bytes ? { type: "application/pdf", body: bytes } : undefined;
    },
    async act(ctx, form, services) {
      if (atVendor(ctx.feature)) return vendorAct(ctx, form, services);
      const view = ctx.feature;
      const { t } = ctx.i18n;
      const result = resultOf(view.result);
      const me = view.payload.signers.find((s) => s.recipient === ctx.session.recipientId);
      if (!me) return { error: t("esign.notSigner"), status: 403 };
      const key = String(me.recipient);
      const next = nextSigner(view.payload, result);
      if (!next || next.recipient !== me.recipient)
        return { error: t("esign.error.notYourTurn"), status: 409 };
      // The signing view's two forms carry no action field: the finish form posts `values`, the
      // decline form `reason`.
      const action = form.action ?? ("values" in form ? "finish" : "reason" in form ? "decline" : "");
      if (action === "consent") {
        const consent = esignConsent(ctx.i18n);
        if (!(await services.hasConsent(consent))) await services.recordConsent(consent);
        if (!result.consented[key]) {
          const updated: EsignResult = {
            ...result,
            consented: { ...result.consented, [key]: services.now() },
          };
          await services.setStatus(view.status === "pending" ? "viewed" : view.status, {
            result: updated as unknown as Record<string, unknown>,
            auditValue: "esign consent",
          });
        }
        return { redirect: ctx.stepBase };
      }
      if (!result.consented[key]) return { error: t("esign.error.consentFirst"), status: 409 };
      if (action === "decline") {
        const reason = (form.reason ?? "").trim();
        if (!reason) return { error: t("esign.error.reason"), status: 400 };
        if (reason.length > REASON_MAX)
          return { error: t("esign.error.reasonLong", { max: REASON_MAX }), status: 400 };
        const updated: EsignResult = {
          ...result,
          declined: { at: services.now(), recipient: me.recipient, reason },
        };
        await services.setStatus("declined", {
          result: updated as unknown as Record<string, unknown>,
          auditValue: "esign declined",
        });
        return { redirect: ctx.stepBase };
      }
      if (action === "finish") {
        const read = await readSigningValues(
          form.values,
          view.payload.fields.filter((f) => f.role === me.role),
          view.payload.fields,
        );
        if ("problem" in read) {
          const { key: message, field, max } = read.problem;
          return { error: t(message, { field: field ?? "", max: max ?? 0 }), status: 400 };
        }
        const signed = {
          ...result.signed,
          [key]: {
            at: services.now(),
            ip: ctx.session.ip,
            user_agent: ctx.session.userAgent,
            auth: ctx.session.authMethod,
            values: read.values,
          },
        };
        const updated: EsignResult = { ...result, signed };
        const all = view.payload.signers.every((s) => signed[String(s.recipient)]);
        await services.setStatus(all ? "sealing" : "partially_signed", {
          result: updated as unknown as Record<string, unknown>,
          auditValue: all ? "esign signed by every signer" : "esign partially signed",
        });
        return { redirect: ctx.stepBase };
      }
      throw ValidationError.field("action", "Unknown action.");
    },
  },
  routes: esignRoutes,
  sandboxRoutes: esignSandboxRoutes,
  jobs: esignJobs,
};

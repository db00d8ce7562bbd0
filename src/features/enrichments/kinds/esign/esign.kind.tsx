/**
 * The `esign` kind (ADR 0076, ADR 0071): the owner names a PDF (a media id, or a template's) checked
 * by the PDF engine, signers (recipients of the container, with a role and an order) and the fields
 * each role fills (signature, initials, date, text, checkbox; page and box). Signers sign in order;
 * each signature moves the status (`viewed`, `partially_signed`) until the last one (`sealing`: the
 * seal job makes the sealed PDF, then `signed`); a decline or the owner's void ends the step. The
 * session step shows the ESIGN consent (recorded in the consent ledger) before anything else, and
 * each signer's copy of the sealed PDF once made.
 */
import type { VNode } from "preact";
import { Type } from "typebox";
import { DocuSignCredentialsSchema } from "../../../../adapters/esign/docusign-credentials.js";
import { AppError, unprocessable, ValidationError } from "../../../../shared/errors.js";
import type {
  Disclosure,
  EnrichmentKind,
  EnrichmentView,
  StepActResult,
  StepContext,
  StepServices,
} from "../../enrichment-kind.js";
import { checkDocument } from "./esign.document.js";
import {
  checkRoles,
  type EsignField,
  type EsignPayload,
  type EsignResult,
  nextSigner,
  readEsignPayload,
  readFields,
  resultOf,
  signerStates,
} from "./esign.model.js";
import { esignRoutes, esignSandboxRoutes } from "./esign.routes.js";
import { EsignField as Field } from "./esign.schemas.js";
import { EsignSealJob, esignJobs } from "./esign.seal.js";
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

/** The ESIGN Act §101(c) consumer consent shown before the first signature (its version is recorded). */
export const ESIGN_CONSENT: Disclosure = {
  id: "esign_consumer_consent",
  version: "2026-11-28",
  text:
    "You agree to use electronic records and signatures for this document. You may ask for a paper " +
    "copy, and you may withdraw this consent, by declining to sign; declining ends this signing step. " +
    "To read and keep the document you need a current web browser able to show and save PDF files.",
};

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

function ConsentForm(props: { csrf: string; action: string }): VNode {
  return (
    <form method="post" action={props.action}>
      <input type="hidden" name="csrf_token" value={props.csrf} />
      <input type="hidden" name="action" value="consent" />
      <h2>Consent to sign electronically</h2>
      <p>{ESIGN_CONSENT.text}</p>
      <button type="submit" class="fy-button fy-button-primary">
        I agree
      </button>
    </form>
  );
}

function StepBody(props: {
  view: EnrichmentView<EsignPayload>;
  recipientId: number;
  consented: boolean;
  csrf: string;
  action: string;
  documentHref: string;
}): VNode {
  const { view, recipientId } = props;
  const result = resultOf(view.result);
  if (view.state !== "pending") {
    const mine = view.payload.signers.some((s) => s.recipient === recipientId);
    return (
      <div>
        <p>This signing step is {view.status.replace("_", " ")}.</p>
        {mine && result.sealed_document !== undefined ? (
          <p>
            <a id="esign-sealed-copy" href={props.documentHref}>
              Download your copy of the signed document (PDF)
            </a>
          </p>
        ) : null}
      </div>
    );
  }
  const me = view.payload.signers.find((s) => s.recipient === recipientId);
  if (!me) return <p>You are not a signer of this document.</p>;
  if (result.signed[String(me.recipient)]) return <p>You signed this document. Thank you.</p>;
  const next = nextSigner(view.payload, result);
  if (next && next.recipient !== me.recipient)
    return <p>Waiting for the signer before you ({next.role}) to sign.</p>;
  if (!props.consented) return <ConsentForm csrf={props.csrf} action={props.action} />;
  const mine = view.payload.fields.filter((f) => f.role === me.role);
  return (
    <div>
      <form method="post" action={props.action}>
        <input type="hidden" name="csrf_token" value={props.csrf} />
        <input type="hidden" name="action" value="finish" />
        <ul>
          {mine.map((f) => (
            <li key={f.name}>
              <label for={`esign-${f.name}`}>
                {f.name} ({f.type}, page {f.page})
              </label>{" "}
              {f.type === "checkbox" ? (
                <input id={`esign-${f.name}`} type="checkbox" name={`field_${f.name}`} value="yes" />
              ) : (
                <input id={`esign-${f.name}`} type="text" name={`field_${f.name}`} maxLength={200} />
              )}
            </li>
          ))}
        </ul>
        <button type="submit" class="fy-button fy-button-primary">
          Finish signing
        </button>
      </form>
      <form method="post" action={props.action}>
        <input type="hidden" name="csrf_token" value={props.csrf} />
        <input type="hidden" name="action" value="decline" />
        <label>
          Reason <input type="text" name="reason" maxLength={500} required />
        </label>
        <button type="submit" class="fy-button">
          Decline to sign
        </button>
      </form>
    </div>
  );
}

/** The step page of a step signed at a vendor (DocuSign): one button to its signing page. */
function VendorStepBody(props: {
  view: EnrichmentView<EsignPayload>;
  recipientId: number;
  csrf: string;
  action: string;
}): VNode {
  const { view, recipientId } = props;
  const result = resultOf(view.result);
  if (view.state !== "pending") return <p>This signing step is {view.status.replace("_", " ")}.</p>;
  const me = view.payload.signers.find((s) => s.recipient === recipientId);
  if (!me) return <p>You are not a signer of this document.</p>;
  if (result.signed[String(me.recipient)]) return <p>You signed this document. Thank you.</p>;
  const back = result.returned?.[String(me.recipient)];
  return (
    <div>
      {back ? (
        <p class="fy-notice">
          You came back from DocuSign. Waiting for DocuSign to confirm your signature; this page shows it once
          DocuSign has. If you did not finish, open DocuSign again.
        </p>
      ) : (
        <p>This document is signed on DocuSign's signing page. Ferry takes you there and back.</p>
      )}
      <form method="post" action={props.action}>
        <input type="hidden" name="csrf_token" value={props.csrf} />
        <input type="hidden" name="action" value="sign" />
        <button type="submit" class="fy-button fy-button-primary">
          {back ? "Open DocuSign again" : "Sign at DocuSign"}
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
  const me = view.payload.signers.find((s) => s.recipient === ctx.session.recipientId);
  if (!me) return { error: "You are not a signer of this document.", status: 403 };
  if (form.action !== "sign") throw ValidationError.field("action", "Unknown action.");
  if (resultOf(view.result).signed[String(me.recipient)])
    return { error: "You signed this document already.", status: 409 };
  const notYourTurn = {
    error: "It is not your turn to sign: the signer before you signs first.",
    status: 409,
  };
  try {
    if (!view.providerRef) {
      if (view.payload.document === null) return { error: "This signing step has no document.", status: 422 };
      const bytes = await services.media.read(view.accountId, view.payload.document);
      const next = await services.start({
        files: [{ name: `${view.title || "Document"}.pdf`, contentType: "application/pdf", bytes }],
      });
      return next.type === "redirect" ? { redirect: next.url } : notYourTurn;
    }
    const provider = await services.provider();
    if (!isEsignVendor(provider)) return { error: "This signing step has no signing provider.", status: 422 };
    const url = await provider.signingUrl(
      view.providerRef,
      { recipient: me.recipient, name: vendorSignerName(ctx.session.recipientName, me.order) },
      services.returnLink(),
    );
    return { redirect: url };
  } catch (error) {
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
  sensitiveResult: false,
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
    summary: (view) =>
      (view.provider !== "local" &&
      view.state === "pending" &&
      Object.keys(resultOf(view.result).returned ?? {}).length > 0
        ? "Waiting for DocuSign to confirm"
        : undefined) ??
      {
        pending: "Not started",
        viewed: "Opened",
        partially_signed: "Partly signed",
        sealing: "Signed, being sealed",
        signed: "Signed",
        declined: "Declined",
        voided: "Voided",
        expired: "Expired",
      }[view.status] ??
      view.status,
    actionLabel: (view) => (view.provider === "local" ? "Review and sign" : "Sign at DocuSign"),
    render: (ctx) => {
      if (ctx.feature.provider !== "local")
        return (
          <VendorStepBody
            view={ctx.feature}
            recipientId={ctx.session.recipientId}
            csrf={ctx.csrf}
            action={`${ctx.stepBase}act`}
          />
        );
      const result = resultOf(ctx.feature.result);
      return (
        <StepBody
          view={ctx.feature}
          recipientId={ctx.session.recipientId}
          consented={Boolean(result.consented[String(ctx.session.recipientId)])}
          csrf={ctx.csrf}
          action={`${ctx.stepBase}act`}
          documentHref={`${ctx.stepBase}document`}
        />
      );
    },
    async formActionOrigins(view, provider) {
      if (view.provider === "local" || view.state !== "pending") return [];
      const vendor = await provider();
      return isEsignVendor(vendor) ? vendor.origins() : [];
    },
    async returned(ctx, services) {
      // Coming back from the vendor's page completes nothing: it is recorded, the vendor confirms.
      const view = ctx.feature;
      const me = view.payload.signers.find((s) => s.recipient === ctx.session.recipientId);
      if (view.provider === "local" || !me || view.state !== "pending") return;
      const result = resultOf(view.result);
      await services.setStatus(view.status, {
        result: {
          ...result,
          returned: { ...result.returned, [String(me.recipient)]: services.now() },
        } as unknown as Record<string, unknown>,
        auditValue: `esign signer back from ${view.provider}, awaiting its confirmation`,
      });
    },
    async document(ctx, services) {
      const result = resultOf(ctx.feature.result);
      const signer = ctx.feature.payload.signers.some((s) => s.recipient === ctx.session.recipientId);
      if (!signer || result.sealed_document === undefined) return undefined;
      return {
        name: `signed-${ctx.feature.id}.pdf`,
        contentType: "application/pdf",
        bytes: await services.media.read(ctx.feature.accountId, result.sealed_document),
      };
    },
    async act(ctx, form, services) {
      if (ctx.feature.provider !== "local") return vendorAct(ctx, form, services);
      const view = ctx.feature;
      const result = resultOf(view.result);
      const me = view.payload.signers.find((s) => s.recipient === ctx.session.recipientId);
      if (!me) return { error: "You are not a signer of this document.", status: 403 };
      const key = String(me.recipient);
      const next = nextSigner(view.payload, result);
      if (!next || next.recipient !== me.recipient)
        return { error: "It is not your turn to sign.", status: 409 };
      if (form.action === "consent") {
        if (!(await services.hasConsent(ESIGN_CONSENT))) await services.recordConsent(ESIGN_CONSENT);
        const updated: EsignResult = { ...result, consented: { ...result.consented, [key]: services.now() } };
        const status = view.status === "pending" ? "viewed" : view.status;
        await services.setStatus(status, {
          result: updated as unknown as Record<string, unknown>,
          auditValue: "esign consent",
        });
        return { back: true };
      }
      if (!result.consented[key]) return { error: "Accept the consent first.", status: 409 };
      if (form.action === "decline") {
        const reason = (form.reason ?? "").trim().slice(0, 500);
        if (!reason) return { error: "Give a reason to decline.", status: 400 };
        const updated: EsignResult = {
          ...result,
          declined: { at: services.now(), recipient: me.recipient, reason },
        };
        await services.setStatus("declined", {
          result: updated as unknown as Record<string, unknown>,
          auditValue: "esign declined",
        });
        return { back: true };
      }
      if (form.action === "finish") {
        const values: Record<string, string> = {};
        for (const f of view.payload.fields.filter((x) => x.role === me.role)) {
          const v = (form[`field_${f.name}`] ?? "").trim();
          if (f.required !== false && f.type !== "checkbox" && !v)
            return { error: `Fill the field ${f.name}.`, status: 400 };
          values[f.name] = v.slice(0, 200);
        }
        const signed = {
          ...result.signed,
          [key]: {
            at: services.now(),
            ip: ctx.session.ip,
            user_agent: ctx.session.userAgent,
            auth: ctx.session.authMethod,
            values,
          },
        };
        const updated: EsignResult = { ...result, signed };
        const all = view.payload.signers.every((s) => signed[String(s.recipient)]);
        await services.setStatus(all ? "sealing" : "partially_signed", {
          result: updated as unknown as Record<string, unknown>,
          auditValue: all ? "esign signed by every signer" : "esign partially signed",
        });
        return { back: true };
      }
      throw ValidationError.field("action", "Unknown action.");
    },
  },
  routes: esignRoutes,
  sandboxRoutes: esignSandboxRoutes,
  jobs: esignJobs,
};

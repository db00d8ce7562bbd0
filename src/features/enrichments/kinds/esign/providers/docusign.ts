/**
 * The esign kind's DocuSign provider (ADR 0074): the esign port's DocuSign adapter
 * (src/adapters/esign/) mapped onto the frame's provider lifecycle. Loaded only when an account's
 * connection names `docusign`. The envelope is created at the first click with the document and
 * every signer as an embedded recipient; each click asks for a fresh recipient view; the status
 * DocuSign reports is mapped onto the kind's statuses (a Connect message only triggers a fetch).
 */
import {
  type NeutralOutcome,
  ProviderError,
  type ProviderFactory,
  type ProviderSettings,
  type RawWebhook,
  type WebhookEvent,
} from "../../../../../adapters/enrichment-provider/enrichment-provider.js";
import type { DocuSignCredentials } from "../../../../../adapters/esign/docusign-credentials.js";
import {
  type EnvelopeState,
  type EsignProvider,
  EsignProviderError,
  type EsignField as PortField,
  ProviderRejectedError,
} from "../../../../../adapters/esign/esign-provider.js";
import { esignProviders } from "../../../../../adapters/esign/esign-providers.js";
import { createHttpClient } from "../../../../../adapters/http-client/http-client.js";
import { inspectPdfBytes } from "../../../../../pdf/inspect.js";
import type { EsignPayload, EsignResult, SignedBy } from "../esign.model.js";
import {
  type EsignVendor,
  recipientOfKey,
  type VendorSigner,
  vendorSignerEmail,
  vendorSignerKey,
  vendorSignerName,
} from "../esign.vendor.js";
import { docuSignSettingsProblem } from "./docusign-settings.js";

const PROVIDER = "docusign";

/** The provider error of a failed DocuSign call (retryable when DocuSign may answer later). */
function providerError(error: unknown): ProviderError {
  if (error instanceof EsignProviderError) {
    const code =
      error.reason === "unavailable"
        ? "unavailable"
        : error.reason === "not_found"
          ? "not_found"
          : error.reason === "state_conflict"
            ? "state_conflict"
            : error.reason === "auth_failed"
              ? "auth_failed"
              : "invalid_input";
    return new ProviderError(code, error.detail, PROVIDER, error.retryable, error.vendorCode);
  }
  return new ProviderError("unexpected", "DocuSign could not be reached.", PROVIDER, true);
}

/** The kind's status for an envelope's state (DocuSign's status is the truth). */
export function outcomeOf(state: EnvelopeState): NeutralOutcome {
  const signed: Record<string, SignedBy> = {};
  let declined: EsignResult["declined"];
  for (const signer of state.signers) {
    const recipient = recipientOfKey(signer.key);
    if (recipient === undefined) continue;
    if (signer.status === "signed")
      signed[String(recipient)] = {
        at: (signer.signedAt ?? new Date(0)).toISOString(),
        ip: "",
        user_agent: "",
        auth: "docusign",
        values: {},
      };
    if (signer.status === "declined")
      declined = {
        at: (signer.declinedAt ?? new Date(0)).toISOString(),
        recipient,
        reason: (signer.declinedReason ?? "").slice(0, 500),
      };
  }
  const result: Partial<EsignResult> = { signed };
  if (declined) result.declined = declined;
  if (state.voidedReason) result.voided_reason = state.voidedReason.slice(0, 500);
  const some = Object.keys(signed).length > 0;
  const opened = state.signers.some((s) => s.status !== "sent");
  const status =
    state.status === "completed"
      ? "signed"
      : state.status === "declined"
        ? "declined"
        : state.status === "voided"
          ? "voided"
          : some
            ? "partially_signed"
            : opened || state.status === "delivered"
              ? "viewed"
              : "pending";
  const final = state.status === "completed" || state.status === "declined" || state.status === "voided";
  return { status, final, result: result as Record<string, unknown> };
}

/**
 * Converts the kind's field boxes (PDF points, origin at the page's bottom-left, y up) to the
 * port's (origin at the top-left, y down), with each page's displayed height.
 */
function portFields(payload: EsignPayload, role: string, heights: number[]): PortField[] {
  return payload.fields
    .filter((f) => f.role === role)
    .map((f) => {
      const height = heights[f.page - 1];
      if (height === undefined)
        throw new ProviderRejectedError(
          "invalid_request",
          PROVIDER,
          `The field "${f.name}" is on page ${f.page}, which the document does not have.`,
        );
      return {
        type: f.type,
        page: f.page,
        x: f.x,
        y: Math.max(0, height - (f.y + f.height)),
        width: f.width,
        height: f.height,
      };
    });
}

/**
 * Builds the DocuSign esign provider of one connection. Settings DocuSign cannot use make every
 * call fail with `invalid_input` (the esign create refuses them first: `docuSignSettingsProblem`).
 */
export const createDocuSignEsign: ProviderFactory = (settings: ProviderSettings): EsignVendor => {
  const allowPrivate = settings.allowPrivateAddresses === true;
  const adapter = esignProviders.docusign({
    http: createHttpClient({ allowPrivateAddresses: allowPrivate }),
    allowInsecureHttp: allowPrivate,
  }) as EsignProvider<DocuSignCredentials>;
  const problem = docuSignSettingsProblem(settings);
  const checked = adapter.validateCredentials(settings.credentials);
  const usable = (): DocuSignCredentials => {
    if (!checked.ok) throw new ProviderError("invalid_input", problem ?? "Not configured.", PROVIDER, false);
    return checked.credentials;
  };
  const url = async (ref: string, signer: VendorSigner, returnUrl: string) =>
    (
      await adapter.signingUrl({
        credentials: usable(),
        envelopeId: ref,
        signerKey: vendorSignerKey(signer.recipient),
        name: signer.name,
        email: vendorSignerEmail(signer.recipient),
        returnUrl,
      })
    ).url;

  return {
    id: PROVIDER,
    vendor: true,
    async start(input) {
      const payload = input.payload as EsignPayload;
      const document = input.files[0];
      if (!document)
        throw new ProviderRejectedError(
          "invalid_request",
          PROVIDER,
          "The signing step has no document to send to DocuSign.",
        );
      const heights = (await inspectPdfBytes(document.bytes)).pages.map((p) => p.height);
      const names = new Map(input.people.map((p) => [p.id, p.name]));
      const signers = payload.signers.map((s) => ({
        key: vendorSignerKey(s.recipient),
        name: vendorSignerName(names.get(s.recipient) ?? "", s.order),
        email: vendorSignerEmail(s.recipient),
        routingOrder: s.order,
        fields: portFields(payload, s.role, heights),
      }));
      const { envelopeId } = await adapter.createEnvelope({
        credentials: usable(),
        documentPdf: new Uint8Array(document.bytes),
        documentName: document.name,
        signers,
        envelopeKey: `feature-${input.featureId}`,
      });
      const me = payload.signers.find((s) => s.recipient === input.recipient.id);
      if (!me) return { ref: envelopeId, next: { type: "none" } };
      try {
        const next = await url(
          envelopeId,
          { recipient: me.recipient, name: vendorSignerName(names.get(me.recipient) ?? "", me.order) },
          input.returnUrl,
        );
        return { ref: envelopeId, next: { type: "redirect", url: next } };
      } catch (error) {
        // The envelope exists: keep its reference; a signer whose turn has not come clicks later.
        if (error instanceof ProviderRejectedError && error.reason === "state_conflict")
          return { ref: envelopeId, next: { type: "none" } };
        throw error;
      }
    },
    async status(ref) {
      return outcomeOf(await adapter.fetchStatus({ credentials: usable(), envelopeId: ref }));
    },
    async cancel(ref) {
      try {
        await adapter.voidEnvelope({
          credentials: usable(),
          envelopeId: ref,
          reason: "Canceled by the sender.",
        });
      } catch (error) {
        throw providerError(error);
      }
    },
    verifyWebhook(raw: RawWebhook): WebhookEvent[] {
      const verified = adapter.verifyWebhook({
        rawBody: raw.body,
        headers: raw.headers,
        credentials: usable(),
      });
      if (!verified.ok)
        throw new ProviderError(
          "auth_failed",
          `Connect message refused (${verified.reason}).`,
          PROVIDER,
          false,
        );
      // A Connect message is a trigger: the kind fetches the envelope's status before applying it.
      return [
        {
          eventId: verified.event.eventId,
          ref: verified.event.envelopeId,
          outcome: { status: "pending", final: false },
        },
      ];
    },
    signingUrl: url,
    async signedPdf(ref) {
      return Buffer.from(await adapter.fetchSignedPdf({ credentials: usable(), envelopeId: ref }));
    },
    async void(ref, reason) {
      await adapter.voidEnvelope({ credentials: usable(), envelopeId: ref, reason: reason.slice(0, 200) });
    },
    origins() {
      return checked.ok ? [new URL(checked.credentials.baseUri).origin] : [];
    },
  };
};

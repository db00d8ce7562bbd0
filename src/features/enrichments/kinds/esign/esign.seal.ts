/**
 * Sealing (ADR 0071): once the last signer signed, the step's status is `sealing` and this job,
 * queued in that same transaction, stamps each field with its signer's value, appends the signing
 * certificate and audit pages and seals the PDF (the PDF engine, on its worker threads). The sealed
 * PDF becomes a media object of the feature and the step ends `signed` with `sealed_document`, so
 * the one completing `feature` callback carries it.
 */
import { createHash } from "node:crypto";
import { defineJob, handleJob, type JobHandler } from "../../../../jobs/job.js";
import type { FieldValue, FilledField, SealAuditEntry, SealSigner } from "../../../../pdf/index.js";
import { AppError } from "../../../../shared/errors.js";
import type { EnrichmentView, KindApi, KindRecipient } from "../../enrichment-kind.js";
import { toPlacement } from "./esign.document.js";
import { type EsignField, type EsignPayload, type EsignResult, resultOf } from "./esign.model.js";
import type { StoredValue } from "./esign.values.js";

/** Seals the signed document of esign feature `feature` of account `account`. */
export const EsignSealJob = defineJob<{ feature: number; account: number }>("esign.seal");

/**
 * The value stamped in `field` from what its signer gave (esign.values.ts checked it when they
 * finished; the sandbox signs with text): a typed mark in the script font, a drawn one as its PNG,
 * text and dates as text, a checkbox ticked or not; an optional field left empty stays empty.
 */
export function stampedValue(field: EsignField, given: StoredValue | undefined): FieldValue | undefined {
  if (field.type === "checkbox") return { kind: "checkbox", checked: given === true };
  if (given === null || given === undefined || typeof given === "boolean") return undefined;
  if (typeof given === "string") {
    const text = given.trim();
    if (!text) return undefined;
    return field.type === "signature" || field.type === "initials"
      ? { kind: "typed", text }
      : { kind: "text", text };
  }
  if (given.method === "typed" && given.text) return { kind: "typed", text: given.text };
  const png = Buffer.from(given.image.slice(given.image.indexOf(",") + 1), "base64");
  return { kind: "drawn", png: new Uint8Array(png) };
}

/** How the certificate page names a session's authentication (`link+email_code` → link, code). */
function authentication(auth: string): string[] {
  return auth.split("+").map((a) => (a.endsWith("_code") ? "two_factor_code" : a));
}

/** What the certificate and audit pages say, from the payload, the result and the recipients. */
export function sealFacts(
  view: EnrichmentView<EsignPayload>,
  result: EsignResult,
  recipients: KindRecipient[],
): { fields: FilledField[]; signers: SealSigner[]; audit: SealAuditEntry[] } {
  const { payload } = view;
  const pages = payload.pages ?? [];
  const who = new Map(recipients.map((r) => [r.id, r]));
  const nameOf = (id: number) => who.get(id)?.name || `Recipient ${id}`;
  const signerOfRole = new Map(payload.signers.map((s) => [s.role, s]));
  const fields = payload.fields.map((f) => {
    const signer = signerOfRole.get(f.role);
    const signed = signer ? result.signed[String(signer.recipient)] : undefined;
    const value = signed ? stampedValue(f, signed.values[f.name]) : undefined;
    return { ...toPlacement(f, pages), value };
  });
  const signers = payload.signers.map((s) => {
    const signed = result.signed[String(s.recipient)];
    if (!signed) throw new Error(`signer ${s.recipient} has not signed`);
    return {
      name: nameOf(s.recipient),
      email: who.get(s.recipient)?.email ?? "",
      role: s.role,
      authentication: authentication(signed.auth),
      signedAt: signed.at,
      ip: signed.ip,
      userAgent: signed.user_agent,
      consentAt: result.consented[String(s.recipient)] ?? signed.at,
    };
  });
  const audit: SealAuditEntry[] = [{ at: view.created, event: "Signing step created", actor: "Owner" }];
  for (const s of signers) {
    audit.push({ at: s.consentAt, event: "Consented to sign electronically", actor: s.name, ip: s.ip });
    audit.push({ at: s.signedAt, event: `Signed as ${s.role}`, actor: s.name, ip: s.ip });
  }
  audit.sort((a, b) => a.at.localeCompare(b.at));
  return { fields, signers, audit };
}

/** The esign kind's jobs. */
export function esignJobs(api: KindApi): JobHandler[] {
  return [
    handleJob(EsignSealJob, async ({ feature, account }) => {
      let view: EnrichmentView<EsignPayload>;
      try {
        view = (await api.get(account, feature)) as EnrichmentView<EsignPayload>;
      } catch (error) {
        if (error instanceof AppError && error.status === 404) return; // deleted meanwhile
        throw error;
      }
      // A re-run after success, or a step that ended otherwise (expired, voided) meanwhile.
      if (view.state !== "pending" || view.status !== "sealing") return;
      const { payload } = view;
      const result = resultOf(view.result);
      const original = await api.media.read(account, payload.document as number);
      const sha = createHash("sha256").update(original).digest("hex");
      if (payload.document_sha256 && sha !== payload.document_sha256)
        throw new Error("the document changed since the step was created; not sealed");
      const facts = sealFacts(view, result, await api.recipients(view.containerId));
      const sealed = await api.pdf.sealDocument({
        original,
        ...facts,
        documentId: `esign-${view.id}`,
        title: view.title || "Signed document",
        sealedAt: api.now(),
      });
      const mediaId = await api.media.store(view, {
        name: `signed-${view.id}.pdf`,
        contentType: "application/pdf",
        bytes: Buffer.from(sealed.bytes),
      });
      const next: EsignResult = {
        ...result,
        sealed_document: mediaId,
        seal: {
          at: sealed.sealedAt,
          original_sha256: sealed.originalSha256,
          sealed_sha256: sealed.sealedSha256,
        },
      };
      await api.setStatus({ accountId: account }, view.id, "signed", {
        result: next as unknown as Record<string, unknown>,
        auditValue: "esign sealed",
      });
    }),
  ];
}

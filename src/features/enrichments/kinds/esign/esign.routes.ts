import { Type } from "typebox";
import { requireAuth } from "../../../../http/auth.js";
import { readFormLikeBody } from "../../../../http/body-parsers.js";
import { authErrors, errorResponses, IdParams, jwtSecurity } from "../../../../http/openapi.js";
import { AppError, notFound, unprocessable, ValidationError } from "../../../../shared/errors.js";
import type { RouteModule } from "../../../../shared/feature.js";
import type { KindApi } from "../../enrichment-kind.js";
import { type EsignPayload, type EsignResult, nextSigner, resultOf } from "./esign.model.js";
import { isEsignVendor } from "./esign.vendor.js";
import { esignTemplateRoutes } from "./esign-templates.routes.js";

const checked = () => () => true;

function readReason(raw: unknown, required: boolean): string | undefined {
  const body = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  const reason = body.reason;
  if (reason === undefined || reason === "") {
    if (required) throw ValidationError.field("reason", "This field is required.");
    return undefined;
  }
  if (typeof reason !== "string" || reason.length > 500)
    throw ValidationError.field("reason", "Give a reason of up to 500 characters.");
  return reason.trim();
}

/** The owner voids a pending signing step (`POST .../esign/{id}/void/` with a reason); templates. */
export function esignRoutes(api: KindApi): RouteModule {
  return async (app) => {
    await esignTemplateRoutes(api)(app);
    app.post(
      "/v1/module_container_esign/esign/:id/void/",
      {
        config: { scope: "containers" as const },
        validatorCompiler: checked,
        schema: {
          operationId: "voidEsign",
          tags: ["enrichments"],
          summary: "Void a signing step (status `voided`; 422 once it left pending)",
          security: jwtSecurity,
          params: IdParams,
          body: Type.Object(
            { reason: Type.String({ minLength: 1, maxLength: 500 }) },
            { title: "EsignVoidInput", additionalProperties: false },
          ),
          response: { 200: api.schema, ...errorResponses(400, 404, 409, 422), ...authErrors },
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        const reason = readReason(await readFormLikeBody(request), true) as string;
        const view = await api.get(auth.accountId, request.params.id);
        if (view.state !== "pending") throw unprocessable(`The feature is ${view.state}: it cannot change.`);
        if (view.provider !== "local" && view.providerRef) {
          // Voided at the vendor first: a step the vendor completed meanwhile answers 409, unchanged.
          const provider = await api.provider(view.id);
          if (isEsignVendor(provider)) await provider.void(view.providerRef, reason);
        }
        if (view.status === "sealing")
          throw new AppError("UNPROCESSABLE_ENTITY", "Every signer signed; the document is being sealed.");
        const done = await api.setStatus(auth, view.id, "voided", {
          result: { ...resultOf(view.result), voided_reason: reason },
          auditValue: "esign voided by the owner",
        });
        return api.present(done);
      },
    );
  };
}

/** Sandbox helpers acting as the signer whose turn it is: sign and decline. */
export function esignSandboxRoutes(api: KindApi): RouteModule {
  return async (app) => {
    const route = (action: "sign" | "decline") =>
      app.post(
        `/v1/sandbox/esign/:id/${action}/`,
        {
          config: { scope: "sandbox" as const },
          validatorCompiler: checked,
          schema: {
            operationId: action === "sign" ? "sandboxSignEsign" : "sandboxDeclineEsign",
            tags: ["sandbox"],
            summary:
              action === "sign"
                ? "Sign as the signer whose turn it is (sandbox only)"
                : "Decline as the signer whose turn it is, with a reason (sandbox only)",
            security: jwtSecurity,
            params: IdParams,
            response: { 200: api.schema, ...errorResponses(400, 404, 409, 422), ...authErrors },
          },
        },
        async (request) => {
          if (!api.config.isSandbox) throw notFound("Sandbox helper");
          const auth = requireAuth(request);
          const raw = request.body === undefined ? {} : await readFormLikeBody(request);
          const reason = readReason(raw, action === "decline");
          const view = await api.get(auth.accountId, request.params.id);
          if (view.provider !== "local")
            throw unprocessable(
              `This step is signed at ${view.provider}: the sandbox signs Ferry's own steps only.`,
            );
          const payload = view.payload as EsignPayload;
          const result: EsignResult = resultOf(view.result);
          const signer = nextSigner(payload, result);
          if (!signer) throw new AppError("CONFLICT", "Every signer has signed.");
          const key = String(signer.recipient);
          const now = api.now();
          const consented = { ...result.consented, [key]: result.consented[key] ?? now };
          let next: EsignResult;
          let status: string;
          if (action === "decline") {
            next = {
              ...result,
              consented,
              declined: { at: now, recipient: signer.recipient, reason: reason ?? "" },
            };
            status = "declined";
          } else {
            const values = Object.fromEntries(
              payload.fields
                .filter((f) => f.role === signer.role)
                .map((f) => [f.name, f.type === "checkbox" ? true : "Sandbox"]),
            );
            const signed = {
              ...result.signed,
              [key]: { at: now, ip: "sandbox", user_agent: "sandbox", auth: "sandbox", values },
            };
            next = { ...result, consented, signed };
            status = payload.signers.every((s) => signed[String(s.recipient)])
              ? "sealing"
              : "partially_signed";
          }
          const done = await api.setStatus({ ...auth, sandbox: true }, view.id, status, {
            result: next as unknown as Record<string, unknown>,
            auditValue: `esign ${status} (sandbox)`,
          });
          return api.present(done);
        },
      );
    route("sign");
    route("decline");
  };
}

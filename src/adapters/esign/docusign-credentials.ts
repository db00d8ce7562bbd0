/**
 * A DocuSign connection's credentials: what an operator copies from DocuSign's admin pages (see
 * docs/esign-docusign.md). Stored sealed with the key ring; validated here before they are saved.
 */
import { createPrivateKey } from "node:crypto";
import { type Static, Type } from "typebox";
import { Value } from "typebox/value";
import type { CredentialsValidation } from "./esign-provider.js";

const ID_PATTERN = "^[A-Za-z0-9-]{1,64}$";
const URL_PATTERN = "^https?://[^\\s/?#@]+/?$";

/** The JSON shape of a DocuSign connection's credentials (strict: unknown properties are refused). */
export const DocuSignCredentialsSchema = Type.Object(
  {
    /** The eSignature account's API account ID (a GUID). */
    accountId: Type.String({ pattern: ID_PATTERN, description: "API account ID (GUID)" }),
    /** The account's REST base, the `base_uri` of /oauth/userinfo, e.g. https://demo.docusign.net. */
    baseUri: Type.String({ pattern: URL_PATTERN, maxLength: 200, description: "eSignature REST base URI" }),
    /** The authentication service: https://account-d.docusign.com (developer) or https://account.docusign.com. */
    oauthBaseUri: Type.String({ pattern: URL_PATTERN, maxLength: 200, description: "OAuth base URI" }),
    /** The app's integration key (OAuth client id), the JWT's `iss`. */
    integrationKey: Type.String({ pattern: ID_PATTERN, description: "Integration key (client ID)" }),
    /** The impersonated user's ID (GUID), the JWT's `sub`; the user must have consented once. */
    userId: Type.String({ pattern: ID_PATTERN, description: "Impersonated user ID (GUID)" }),
    /** PEM of the integration key's RSA private key (PKCS#1 or PKCS#8) for the JWT grant. */
    rsaPrivateKey: Type.Optional(Type.String({ minLength: 100, maxLength: 10_000 })),
    /** A ready access token instead of the JWT grant (short-lived; development and tests). */
    accessToken: Type.Optional(Type.String({ minLength: 1, maxLength: 4000 })),
    /** Connect HMAC keys; a message is accepted when any of its signatures matches any key (rotation). */
    hmacKeys: Type.Array(Type.String({ minLength: 16, maxLength: 200 }), { minItems: 1, maxItems: 10 }),
  },
  { additionalProperties: false },
);

/** Validated DocuSign credentials; exactly one of rsaPrivateKey and accessToken is set. */
export type DocuSignCredentials = Static<typeof DocuSignCredentialsSchema>;

/**
 * Checks the schema, then that exactly one of rsaPrivateKey and accessToken is given, that the key is an
 * RSA private key of at least 2048 bits, and that both URIs use https unless `allowHttp` (development and
 * tests). Errors are keyed by credential field; no secret is echoed.
 */
export function validateDocuSignCredentials(
  value: unknown,
  options: { allowHttp: boolean },
): CredentialsValidation<DocuSignCredentials> {
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string): void => {
    const list = errors[field] ?? [];
    if (!list.includes(message)) list.push(message);
    errors[field] = list;
  };
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, errors: { credentials: ["Credentials must be a JSON object."] } };
  }
  for (const error of Value.Errors(DocuSignCredentialsSchema, value)) {
    if (error.keyword === "additionalProperties") {
      const extra = (error.params as { additionalProperties?: string[] }).additionalProperties ?? [];
      for (const name of extra) add(name.slice(0, 64), "Not a DocuSign credential.");
      continue;
    }
    if (error.keyword === "boolean") continue;
    const field = error.instancePath.split("/")[1] || missingProperty(error.params) || "credentials";
    add(field, messageFor(field, error.keyword));
  }
  const candidate = value as Partial<DocuSignCredentials>;
  if (!options.allowHttp) {
    for (const field of ["baseUri", "oauthBaseUri"] as const) {
      const uri = candidate[field];
      if (typeof uri === "string" && errors[field] === undefined && !uri.startsWith("https://")) {
        add(field, "Must use https.");
      }
    }
  }
  const hasKey = typeof candidate.rsaPrivateKey === "string";
  const hasToken = typeof candidate.accessToken === "string";
  if (hasKey === hasToken)
    add("rsaPrivateKey", "Give either rsaPrivateKey (JWT grant) or accessToken, not both.");
  if (hasKey && errors.rsaPrivateKey === undefined) {
    const problem = rsaKeyProblem(candidate.rsaPrivateKey!);
    if (problem) add("rsaPrivateKey", problem);
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, credentials: value as DocuSignCredentials };
}

function missingProperty(params: unknown): string | undefined {
  const required = (params as { requiredProperties?: string[] } | undefined)?.requiredProperties;
  return required?.[0];
}

function messageFor(field: string, keyword: string): string {
  if (keyword === "required") return "Required.";
  switch (field) {
    case "baseUri":
    case "oauthBaseUri":
      return "Must be an http(s) origin such as https://demo.docusign.net, without a path.";
    case "accountId":
    case "integrationKey":
    case "userId":
      return "Must be the GUID shown in DocuSign's Apps and Keys page.";
    case "hmacKeys":
      return "Must be a list of 1 to 10 Connect HMAC keys of 16 to 200 characters.";
    case "rsaPrivateKey":
      return "Must be the PEM of the integration key's RSA private key.";
    case "accessToken":
      return "Must be an access token of at most 4000 characters.";
    default:
      return "Invalid value.";
  }
}

function rsaKeyProblem(pem: string): string | undefined {
  try {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType !== "rsa") return "Must be an RSA private key.";
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < 2048) return "The RSA key must have at least 2048 bits.";
    return undefined;
  } catch {
    return "Must be the PEM of the integration key's RSA private key.";
  }
}

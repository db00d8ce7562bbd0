/**
 * The check of a DocuSign connection's settings beyond their schema (exactly one of key and token,
 * the RSA key's size, https unless the deployment allows local fakes). Small and vendor-free, so
 * the esign kind asks it when a step is created without loading the DocuSign provider.
 */
import type { ProviderSettings } from "../../../../../adapters/enrichment-provider/enrichment-provider.js";
import { validateDocuSignCredentials } from "../../../../../adapters/esign/docusign-credentials.js";

/** Why a connection's settings cannot reach DocuSign (naming the settings, never their values). */
export function docuSignSettingsProblem(settings: ProviderSettings): string | undefined {
  const checked = validateDocuSignCredentials(settings.credentials, {
    allowHttp: settings.allowPrivateAddresses === true,
  });
  if (checked.ok) return undefined;
  const fields = Object.keys(checked.errors).sort();
  return `The DocuSign connection is not configured: check ${fields.map((f) => `credentials.${f}`).join(", ")}.`;
}

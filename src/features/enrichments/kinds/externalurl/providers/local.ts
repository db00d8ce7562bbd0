/**
 * The externalurl kind's only provider: Ferry itself. Starting sends the recipient to the owner's URL;
 * there is no vendor to ask, cancel or hear from, so status is whatever Ferry recorded.
 */
import {
  type EnrichmentProvider,
  ProviderError,
  type ProviderFactory,
} from "../../../../../adapters/enrichment-provider/enrichment-provider.js";

/** Builds the local externalurl provider. */
export const createLocalExternalUrl: ProviderFactory = (): EnrichmentProvider => ({
  id: "local",
  async start(input) {
    const url = typeof input.payload.url === "string" ? input.payload.url : "";
    return { ref: `local-${input.featureId}`, next: { type: "redirect", url } };
  },
  async status() {
    return { status: "pending", final: false };
  },
  async cancel() {},
  verifyWebhook() {
    throw new ProviderError(
      "auth_failed",
      "The local externalurl provider takes no webhooks.",
      "local",
      false,
    );
  },
});

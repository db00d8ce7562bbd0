/**
 * The esign kind's local provider: Ferry itself signs in its own session page;
 * there is no vendor to ask, cancel or hear from, so status is whatever Ferry recorded.
 */
import {
  type EnrichmentProvider,
  ProviderError,
  type ProviderFactory,
} from "../../../../../adapters/enrichment-provider/enrichment-provider.js";

/** Builds the local esign provider. */
export const createLocalEsign: ProviderFactory = (): EnrichmentProvider => ({
  id: "local",
  async start(input) {
    void input.payload;
    return { ref: `local-${input.featureId}`, next: { type: "none" } };
  },
  async status() {
    return { status: "pending", final: false };
  },
  async cancel() {},
  verifyWebhook() {
    throw new ProviderError("auth_failed", "The local esign provider takes no webhooks.", "local", false);
  },
});

/**
 * The registry of esign adapters: provider name → factory. The only file that imports implementations;
 * only the composition root and the esign kind's provider map (loaded lazily, when an account's
 * connection names a provider) import it. `local` has no entry: it is Ferry's own signing step, built by
 * the esign kind itself, so an account choosing `local` never reaches this map.
 */
import { createDocuSignEsignProvider, type DocuSignProviderOptions } from "./docusign-esign-provider.js";
import type { EsignProvider, ExternalEsignProviderName } from "./esign-provider.js";

/** What every adapter factory receives from the composition root. */
export type EsignProviderDeps = DocuSignProviderOptions;

/** Provider name → factory, one line per third-party provider (exhaustive over ExternalEsignProviderName). */
export const esignProviders: {
  readonly [Name in ExternalEsignProviderName]: (deps: EsignProviderDeps) => EsignProvider;
} = {
  docusign: (deps) => createDocuSignEsignProvider(deps) as EsignProvider,
};

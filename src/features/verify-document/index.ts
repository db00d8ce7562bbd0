/**
 * The public document check: `/verify/document`, where anyone uploads a PDF and learns whether this
 * service sealed it, whether it is unchanged since, and who signed it. It stores nothing.
 */
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import type { Config } from "../../config/config.js";
import type { RateLimiter } from "../../http/rate-limit.js";
import type { PdfEngine } from "../../pdf/index.js";
import type { Feature } from "../../shared/feature.js";
import { VERIFY_DOCUMENT_PATH, verifyDocumentPages } from "./verify-document.pages.js";

export { VERIFY_DOCUMENT_PATH } from "./verify-document.pages.js";

/** What the feature offers other parts: the page's path (printed on certificate pages). */
export interface VerifyDocumentService {
  readonly path: string;
}

/** Builds the feature (rate limit rule `verify-document-ip` must exist on `rateLimiter`). */
export function createVerifyDocumentFeature(deps: {
  config: Config;
  keyRing: KeyRing;
  rateLimiter: RateLimiter;
  pdf: PdfEngine;
}): Feature<VerifyDocumentService> {
  return {
    service: { path: VERIFY_DOCUMENT_PATH },
    routes: [
      verifyDocumentPages({
        pdf: deps.pdf,
        keyRing: deps.keyRing,
        rateLimiter: deps.rateLimiter,
        publicBaseUrl: deps.config.publicBaseUrl,
        sandbox: deps.config.isSandbox,
      }),
    ],
  };
}

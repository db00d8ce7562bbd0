import { defineJob, type EmptyPayload } from "../../jobs/job.js";

/** Applies one recorded webhook event. */
export const ProviderWebhookJob = defineJob<{ event: number }>("enrichments.webhook");
/** The recurring status fetch of steps open at a vendor. */
export const ProviderReconcileJob = defineJob<EmptyPayload>("enrichments.reconcile");
/** The recurring retention purge of enrichment results. */
export const EnrichmentPurgeJob = defineJob<EmptyPayload>("enrichments.purge");
/** Cancels at its vendor a step deleted while pending (outside the deleting transaction). */
export const ProviderCancelJob = defineJob<{ connection: number; ref: string }>("enrichments.cancel");

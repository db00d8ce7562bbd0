/**
 * The audit feature: an append-only, hash-chained log per account (writer), its search
 * (`GET /v1/logentry/search/`), chain verification and export (`ferry audit verify|export`), and
 * retention (AUDIT_RETENTION_DAYS).
 */
import type { KeyRing } from "../../adapters/key-ring/key-ring.js";
import type { Database } from "../../db/database.js";
import { handleJob } from "../../jobs/job.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { Clock } from "../../shared/clock.js";
import { bindCommands, type Feature } from "../../shared/feature.js";
import { auditCommands } from "./audit.commands.js";
import { auditRoutes } from "./audit.routes.js";
import { AuditService } from "./audit.service.js";
import { AuditWriter } from "./audit.writer.js";
import { AuditAnchorService } from "./audit-anchor.service.js";
import { AuditChainService } from "./audit-chain.service.js";
import { AuditRetentionJob, AuditRetentionService } from "./audit-retention.service.js";

export { auditCommands } from "./audit.commands.js";
export { AuditCode, type AuditCodeValue, type AuditEvent, AuditWriter } from "./audit.writer.js";
export { type AuditActor, actorFields } from "./audit-actor.js";
export type { AccountChainReport } from "./audit-chain.service.js";

/** What the audit feature offers: the writer every feature records with, and its own services. */
export interface AuditLog {
  readonly writer: AuditWriter;
  readonly search: AuditService;
  readonly chain: AuditChainService;
  readonly anchors: AuditAnchorService;
  readonly retention: AuditRetentionService;
}

/** Builds the audit feature. */
export function createAuditFeature(deps: {
  database: Database;
  clock: Clock;
  jobs: JobQueue;
  keyRing: KeyRing;
  retentionDays: number;
  /** See AUDIT_EXACT_COUNT_LIMIT (default 10,000). */
  exactCountLimit?: number;
}): Feature<AuditLog> {
  const { database, clock, jobs } = deps;
  const service: AuditLog = {
    writer: new AuditWriter(database, clock),
    search: new AuditService(database, deps.exactCountLimit),
    chain: new AuditChainService(database),
    anchors: new AuditAnchorService(database, deps.keyRing, clock),
    retention: new AuditRetentionService(database, clock, jobs, deps.retentionDays),
  };
  return {
    service,
    routes: [auditRoutes(service.search)],
    jobs: [handleJob(AuditRetentionJob, (_payload, job) => service.retention.runJob(job.id))],
    commands: bindCommands(auditCommands, { chain: service.chain, anchors: service.anchors }),
    scheduleRecurringJobs: () => service.retention.ensureScheduled(),
  };
}

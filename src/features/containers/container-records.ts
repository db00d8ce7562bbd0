import type { Executor } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import { AppError, notFound, unprocessable } from "../../shared/errors.js";
import { toTimestamp } from "../../shared/time.js";
import type { FeatureTargets, FeatureUploader, UploadTarget } from "../media/index.js";
import { findFeatureById, permissionsOf } from "./container-features.repository.js";
import { findContainerById } from "./containers.repository.js";
import { refuseWhileWaiting } from "./feature-order.js";

/**
 * The container tables' own state with no dependency on other features, built before the media
 * feature so that media can ask a feature's rules through its FeatureTargets port.
 */
export class ContainerRecords implements FeatureTargets {
  constructor(private readonly clock: Clock) {}

  /**
   * The owner attaches files to push features (and pushpull features of type push) while they are
   * pending; a recipient sends files to pull features they may see, while pending, unexpired, and
   * the container is sent. 404 for another account's or an invisible feature, 422 otherwise.
   */
  async uploadTarget(ex: Executor, featureId: number, who: FeatureUploader): Promise<UploadTarget> {
    const feature = await findFeatureById(ex, featureId);
    const container = feature && (await findContainerById(ex, feature.container_id));
    if (!feature || !container) throw notFound("Feature");
    if (who.kind === "owner") {
      if (feature.account_id !== who.accountId) throw notFound("Feature");
      if (feature.direction !== "push") {
        throw unprocessable(
          "Files are attached to push features only; recipients upload the files of pull features.",
        );
      }
    } else {
      const allowed = (await permissionsOf(ex, [feature.id])).get(feature.id);
      if (allowed && !allowed.includes(who.recipientId)) throw notFound("Feature");
      if (feature.direction !== "pull") throw unprocessable("This feature does not take files.");
      if (container.state === "draft") throw unprocessable("This container was not sent yet.");
      await refuseWhileWaiting(ex, feature);
    }
    if (feature.state !== "pending")
      throw unprocessable(`The feature is ${feature.state}: it takes no more files.`);
    if (feature.expires_at !== null && feature.expires_at <= toTimestamp(this.clock.now())) {
      throw unprocessable("The feature has expired: it takes no more files.");
    }
    return {
      requestId: container.id,
      accountId: feature.account_id,
      featureId: feature.id,
      recipientId: who.kind === "recipient" ? who.recipientId : null,
      allowedExtensions: feature.allowed_file_extensions ? feature.allowed_file_extensions.split(",") : null,
      maxFileBytes: feature.max_file_size === null ? null : Number(feature.max_file_size),
      maxFiles: feature.max_files === null ? null : Number(feature.max_files),
      downloadLimit:
        feature.direction === "pull"
          ? 1
          : feature.max_file_downloads === null
            ? null
            : Number(feature.max_file_downloads),
    };
  }

  /**
   * A recipient downloads the owner's files of a push feature (or a pushpull of type push) they may
   * see, once the container is sent and until the feature expires.
   */
  async checkDownload(ex: Executor, featureId: number, recipientId: number): Promise<void> {
    const feature = await findFeatureById(ex, featureId);
    const container = feature && (await findContainerById(ex, feature.container_id));
    if (!feature || !container || container.state === "draft" || feature.direction !== "push")
      throw notFound("Media");
    const allowed = (await permissionsOf(ex, [feature.id])).get(feature.id);
    if (allowed && !allowed.includes(recipientId)) throw notFound("Media");
    if (
      feature.state === "expired" ||
      (feature.expires_at !== null && feature.expires_at <= toTimestamp(this.clock.now()))
    ) {
      throw new AppError("GONE", "This feature has expired; its files were removed.");
    }
    await refuseWhileWaiting(ex, feature);
  }
}

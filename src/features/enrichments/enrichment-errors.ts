import { AppError } from "../../shared/errors.js";
import type { FeatureRow } from "../containers/index.js";

/** 409: the step waits for the features it names in `after`. */
export function refuseWaiting(waits: FeatureRow[]): AppError {
  return new AppError(
    "CONFLICT",
    `This step waits for feature${waits.length > 1 ? "s" : ""} ${waits.map((f) => f.id).join(", ")} to complete.`,
  );
}

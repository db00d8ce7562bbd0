import { AppError } from "../../shared/errors.js";
import type { FeatureRow } from "../containers/index.js";

/** 409: the step waits for the features it names in `after`. */
export function refuseWaiting(waits: FeatureRow[]): AppError {
  return new AppError(
    "CONFLICT",
    `This step waits for feature${waits.length > 1 ? "s" : ""} ${waits.map((f) => f.id).join(", ")} to complete.`,
  );
}

/** 409: another request is starting this step at its vendor right now (a double click, two tabs). */
export class StepStartingError extends AppError {
  constructor() {
    super(
      "CONFLICT",
      "This step is being started at its provider by another request; try again in a moment.",
    );
  }
}

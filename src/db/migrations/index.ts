import type { Migration } from "kysely";
import * as m0001 from "./0001_foundation.js";
import * as m0002 from "./0002_core_domain.js";

/** Every migration in order. Names sort; add new ones at the end, never edit landed ones. */
export const migrations: Record<string, Migration> = {
  "0001_foundation": m0001,
  "0002_core_domain": m0002,
};

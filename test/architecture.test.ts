import { describe, expect, it } from "vitest";
import { checkTree, violations } from "../scripts/boundaries.js";

describe("architecture boundaries", () => {
  it("hold across src/", () => {
    expect(checkTree()).toEqual([]);
  });

  it("refuse the composition root below it", () => {
    expect(
      violations("features/media/media.service.ts", 'import type { Ferry } from "../../app/ferry.js";'),
    ).toEqual(["features/media/media.service.ts: imports the composition root app/ferry.ts (rule 1)"]);
    expect(violations("main.ts", 'import { serve } from "./app/processes.js";')).toEqual([]);
  });

  it("refuse a feature in the layers below features", () => {
    expect(violations("http/auth.ts", 'import { AuditCode } from "../features/audit/index.js";')).toEqual([
      "http/auth.ts: imports the feature module features/audit/index.ts from below the features (rule 2)",
    ]);
  });

  it("refuse another feature's internals, also re-exported or imported dynamically", () => {
    const wrong = [
      'import { listParts } from "../media/media.repository.js";',
      'export { presentMedia } from "../media/media.presenter.js";',
      'const m = await import("../media/media.service.js");',
    ].join("\n");
    expect(violations("features/recipient/recipient.service.ts", wrong)).toHaveLength(3);
    expect(
      violations(
        "features/recipient/recipient.service.ts",
        'import type { MediaService } from "../media/index.js";',
      ),
    ).toEqual([]);
    expect(violations("features/media/media.routes.ts", 'import { x } from "./media.body.js";')).toEqual([]);
  });

  it("refuse Kysely outside repositories, src/db/ and src/jobs/", () => {
    const text = 'import { sql } from "kysely";';
    expect(violations("features/audit/audit.writer.ts", text)).toEqual([
      "features/audit/audit.writer.ts: imports Kysely outside a repository, src/db/ or src/jobs/ (rule 4)",
    ]);
    expect(violations("features/audit/audit.repository.ts", text)).toEqual([]);
    expect(violations("db/database.ts", text)).toEqual([]);
  });

  it("refuse reading the environment outside src/config/", () => {
    expect(violations("features/media/media.service.ts", "const x = process.env.X;")).toHaveLength(1);
    expect(violations("config/config.ts", "const x = process.env.X;")).toEqual([]);
  });
});

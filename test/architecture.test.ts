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

  it("keep enrichment kinds apart: a kind imports only its folder and the descriptor", () => {
    const from = "features/enrichments/kinds/esign/esign.kind.ts";
    expect(violations(from, 'import { x } from "../externalurl/externalurl.kind.js";')).toEqual([
      `${from}: imports features/enrichments/kinds/externalurl/externalurl.kind.ts; a kind imports only its folder and enrichment-kind.ts (rule 6)`,
    ]);
    expect(violations(from, 'import { x } from "../../enrichments.service.js";')).toHaveLength(1);
    expect(violations(from, 'import type { EnrichmentKind } from "../../enrichment-kind.js";')).toEqual([]);
    expect(violations(from, 'import { p } from "./providers/local.js";')).toEqual([]);
    expect(
      violations(
        "features/enrichments/enrichments.service.ts",
        'import { k } from "./kinds/esign/esign.kind.js";',
      ),
    ).toHaveLength(1);
    expect(
      violations("features/enrichments/kinds.ts", 'import { k } from "./kinds/esign/esign.kind.js";'),
    ).toEqual([]);
  });

  it("keep provider ports to types: a port imports no implementation", () => {
    const port = "adapters/esign/esign.port.ts";
    expect(violations(port, 'import { DocuSign } from "./docusign-esign.js";')).toEqual([
      `${port}: a provider port imports ./docusign-esign.js, not only types (rule 7)`,
    ]);
    expect(
      violations(
        port,
        'import type { NeutralOutcome } from "../enrichment-provider/enrichment-provider.js";',
      ),
    ).toEqual([]);
    expect(
      violations(port, 'export { ProviderError } from "../enrichment-provider/enrichment-provider.js";'),
    ).toEqual([]);
  });
});

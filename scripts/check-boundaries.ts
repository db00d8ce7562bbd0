/** Exits 1, listing every broken rule, when src/ breaks an import rule of scripts/boundaries.ts. */
import { checkTree } from "./boundaries.js";

const problems = checkTree();
if (problems.length > 0) {
  console.error(`Architecture boundaries broken (${problems.length}):\n${problems.join("\n")}`);
  process.exit(1);
}
console.log("Architecture boundaries hold.");

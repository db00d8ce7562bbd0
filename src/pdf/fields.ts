/** Checks where fields are placed before anything is signed (coordinates: see types.ts). */
import type { FieldPlacement, FieldProblem, PageSize } from "./types.js";

/** Smallest side of a field, in points. */
export const MIN_FIELD_SIDE = 4;

const area = (f: FieldPlacement) => `page ${f.page} at (${f.x}, ${f.y}), ${f.width}×${f.height} pt`;

/**
 * Every problem with `fields` on a document of `pages`: a page that does not exist, a box that is
 * not wholly on its page or is smaller than 4 pt, two fields sharing an id, two fields on the same
 * page whose boxes overlap (touching edges do not). Empty when all is well.
 */
export function validateFields(
  pages: readonly PageSize[],
  fields: readonly FieldPlacement[],
): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  for (const f of fields) {
    if (seen.has(f.id))
      problems.push({ fieldId: f.id, code: "DUPLICATE_ID", message: `Field id ${f.id} is used twice.` });
    seen.add(f.id);
    const page = Number.isInteger(f.page) ? pages[f.page - 1] : undefined;
    if (!page) {
      problems.push({
        fieldId: f.id,
        code: "PAGE_MISSING",
        message: `Field ${f.id} is on page ${f.page}; the document has ${pages.length} pages.`,
      });
      continue;
    }
    const numbers = [f.x, f.y, f.width, f.height];
    if (!numbers.every(Number.isFinite) || f.width < MIN_FIELD_SIDE || f.height < MIN_FIELD_SIDE) {
      problems.push({
        fieldId: f.id,
        code: "TOO_SMALL",
        message: `Field ${f.id} must be at least ${MIN_FIELD_SIDE}×${MIN_FIELD_SIDE} pt.`,
      });
      continue;
    }
    if (f.x < 0 || f.y < 0 || f.x + f.width > page.width || f.y + f.height > page.height) {
      problems.push({
        fieldId: f.id,
        code: "OFF_PAGE",
        message: `Field ${f.id} (${area(f)}) is not wholly on its page (${page.width}×${page.height} pt).`,
      });
    }
  }
  // Pairs on the same page, sorted by left edge: a field is compared only with those it may reach.
  const placed = fields
    .filter((f) => pages[f.page - 1] && [f.x, f.y, f.width, f.height].every(Number.isFinite))
    .sort((a, b) => a.page - b.page || a.x - b.x);
  for (let i = 0; i < placed.length; i++) {
    const a = placed[i]!;
    for (let j = i + 1; j < placed.length; j++) {
      const b = placed[j]!;
      if (b.page !== a.page || b.x >= a.x + a.width) break;
      if (a.y < b.y + b.height && b.y < a.y + a.height) {
        problems.push({
          fieldId: b.id,
          otherFieldId: a.id,
          code: "OVERLAP",
          message: `Field ${b.id} overlaps field ${a.id} on page ${a.page}.`,
        });
      }
    }
  }
  return problems;
}

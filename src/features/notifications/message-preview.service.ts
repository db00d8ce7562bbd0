import type { Database } from "../../db/database.js";
import { notFound, ValidationError } from "../../shared/errors.js";
import { parseId } from "../../shared/ids.js";
import type { RequestRecords, RequestsService } from "../requests/index.js";
import type { ComposedEmail, EmailTemplatesService } from "../templates/index.js";
import { gatherMessageInput, type MessageSources } from "./message-input.js";

/**
 * Email previews (`POST /v1/email_template/render/`): a stored or given template rendered against
 * a request of the account (its first contact) or sample data, as the email would carry it.
 */
export class MessagePreview {
  constructor(
    private readonly deps: {
      database: Database;
      records: RequestRecords;
      requests: Pick<RequestsService, "loadRequest">;
      templates: EmailTemplatesService;
      sources: MessageSources;
    },
  ) {}

  /**
   * Renders `slug` (a stored template) or `html` (+ `subject`) against `request` (an id of the
   * account) or sample data. 400 for a syntax error, 404 for an unknown slug or request, 422 when
   * rendering fails.
   */
  async render(accountId: number, body: Record<string, unknown>): Promise<ComposedEmail> {
    const { db } = this.deps.database;
    const { templates } = this.deps;
    const template = await templates.previewSource(accountId, body);
    if (body.request === undefined || body.request === null || body.request === "") {
      return templates.renderWith(template, await templates.sampleInput(db, accountId), accountId);
    }
    const id = parseId(body.request);
    if (id === undefined) throw ValidationError.field("request", "A valid integer is required.");
    const request = await this.deps.records.find(db, accountId, id);
    if (!request) throw notFound("Request");
    const { related } = await this.deps.requests.loadRequest(db, accountId, id);
    const first = related.contacts[0]?.contact;
    const contact = { first_name: first?.first_name ?? "", last_name: first?.last_name ?? "" };
    const input = await gatherMessageInput(this.deps.sources, db, request, contact);
    return templates.renderWith(template, input, accountId);
  }
}

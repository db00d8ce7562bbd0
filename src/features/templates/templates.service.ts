import type { Config } from "../../config/config.js";
import type { Database, Executor } from "../../db/database.js";
import type { Clock } from "../../shared/clock.js";
import { AppError, notFound, unprocessable, ValidationError } from "../../shared/errors.js";
import type { PageRequest } from "../../shared/pagination.js";
import { toTimestamp } from "../../shared/time.js";
import { type AuditActor, AuditCode, type AuditWriter, actorFields } from "../audit/index.js";
import type { AccountsService } from "../auth/index.js";
import type { BrandingService } from "../branding/index.js";
import { TemplateError } from "./engine/template-error.js";
import type { ComposedEmail, MessageInput } from "./message-composer.js";
import type { TemplateRenderer } from "./render/renderer.js";
import { type EmailTemplateView, presentTemplate } from "./templates.presenter.js";
import {
  countTemplates,
  deleteTemplate,
  findTemplate,
  insertTemplate,
  listTemplates,
  updateTemplate,
} from "./templates.repository.js";

/**
 * What templates need to know about the requests that name them (the requests feature answers): a
 * template named by an open request keeps its slug and cannot be deleted.
 */
export interface TemplateUsage {
  /** True while a request of the account that is not complete (draft or sent) names the template. */
  isUsedByOpenRequest(ex: Executor, accountId: number, slug: string): Promise<boolean>;
}

/** A template to render: its subject and HTML sources. */
export interface TemplateSource {
  subject: string;
  html: string;
}

/** Who changes templates (for the audit entry). */
export interface TemplateCaller {
  accountId: number;
  /** The API key (application) of the call; null for the dashboard. */
  applicationId: number | null;
  /** The signed-in dashboard user who made the change (named in the audit entry). */
  actor?: AuditActor;
}

const SLUG = /^[A-Za-z0-9_-]{1,100}$/;
const MAX_SUBJECT = 998;
const MAX_HTML = 256 * 1024;

/**
 * Email templates: per-account, addressed by slug, Liquid sources checked at save time
 * (a syntax error is a 400 naming the line), and rendered for previews against a request or sample data.
 */
export class EmailTemplatesService {
  constructor(
    private readonly database: Database,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly audit: AuditWriter,
    private readonly renderer: TemplateRenderer,
    private readonly accounts: AccountsService,
    private readonly branding: BrandingService,
    private readonly usage: TemplateUsage,
  ) {}

  /** Creates a template: slug (unique per account), subject (optional), html (required). 400 when invalid. */
  async create(caller: TemplateCaller, body: Record<string, unknown>): Promise<EmailTemplateView> {
    const input = await this.check(caller.accountId, body, true);
    const now = toTimestamp(this.clock.now());
    return this.database.db.transaction().execute(async (trx) => {
      if (await findTemplate(trx, caller.accountId, input.slug!)) throw duplicateSlug();
      const row = await insertTemplate(trx, {
        accountId: caller.accountId,
        slug: input.slug!,
        subject: input.subject ?? "",
        html: input.html!,
        now,
      });
      await this.record(trx, caller, AuditCode.ENTITY_CREATED, row.id, row.slug);
      return presentTemplate(row);
    });
  }

  /** A page of the account's templates ordered by slug, with the total count. */
  async list(accountId: number, page: PageRequest): Promise<{ results: EmailTemplateView[]; count: number }> {
    const { db } = this.database;
    const [rows, count] = await Promise.all([
      listTemplates(db, accountId, page.pageSize, page.offset),
      countTemplates(db, accountId),
    ]);
    return { results: rows.map(presentTemplate), count };
  }

  /** One template by slug; 404 when the account has none with that slug. */
  async get(accountId: number, slug: string): Promise<EmailTemplateView> {
    const row = await findTemplate(this.database.db, accountId, slug);
    if (!row) throw notFound("Email template");
    return presentTemplate(row);
  }

  /** Partial update of slug, subject and html (each checked as on create); 404 / 400. */
  async update(
    caller: TemplateCaller,
    slug: string,
    body: Record<string, unknown>,
  ): Promise<EmailTemplateView> {
    const input = await this.check(caller.accountId, body, false);
    const now = toTimestamp(this.clock.now());
    return this.database.db.transaction().execute(async (trx) => {
      const row = await findTemplate(trx, caller.accountId, slug);
      if (!row) throw notFound("Email template");
      if (input.slug !== undefined && input.slug !== row.slug) {
        if (await findTemplate(trx, caller.accountId, input.slug)) throw duplicateSlug();
        if (await this.usage.isUsedByOpenRequest(trx, caller.accountId, row.slug)) {
          throw unprocessable("The template is used by an open request: its slug cannot change.");
        }
      }
      const updated = await updateTemplate(trx, row.id, { ...input, now });
      await this.record(trx, caller, AuditCode.ENTITY_UPDATED, row.id, updated.slug);
      return presentTemplate(updated);
    });
  }

  /** Deletes a template; 422 while an open request (sent or draft, not complete) names it. */
  async remove(caller: TemplateCaller, slug: string): Promise<void> {
    await this.database.db.transaction().execute(async (trx) => {
      const row = await findTemplate(trx, caller.accountId, slug);
      if (!row) throw notFound("Email template");
      if (await this.usage.isUsedByOpenRequest(trx, caller.accountId, row.slug)) {
        throw unprocessable("The template is used by an open request and cannot be deleted.");
      }
      await deleteTemplate(trx, row.id);
      await this.record(trx, caller, AuditCode.ENTITY_DELETED, row.id, row.slug);
    });
  }

  /** The sources of the account's template `slug`, read through `ex` (undefined when there is none). */
  async sourceOf(ex: Executor, accountId: number, slug: string): Promise<TemplateSource | undefined> {
    const row = await findTemplate(ex, accountId, slug);
    return row && { subject: row.subject, html: row.html };
  }

  /**
   * Throws 422 unless `slug` names a template of the account (spec: `email_template_slug` "must name
   * an existing template").
   */
  async requireTemplate(ex: Executor, accountId: number, slug: string): Promise<void> {
    if (!(await findTemplate(ex, accountId, slug))) {
      throw unprocessable(`The email template "${slug}" does not exist.`);
    }
  }

  /**
   * The template a preview renders: `slug` (a stored template) or `html` (+ `subject`) from the
   * preview body. 400 when neither is given or the sources have a syntax error, 404 for an unknown slug.
   */
  async previewSource(accountId: number, body: Record<string, unknown>): Promise<TemplateSource> {
    if (body.slug !== undefined && body.slug !== null && body.slug !== "") {
      const row = await findTemplate(this.database.db, accountId, String(body.slug));
      if (!row) throw notFound("Email template");
      return { subject: row.subject, html: row.html };
    }
    const input = await this.check(accountId, { subject: body.subject, html: body.html }, false);
    if (input.html === undefined) {
      throw new ValidationError({ non_field_errors: ["Give either slug or html."] });
    }
    return { subject: input.subject ?? "", html: input.html };
  }

  /**
   * Renders `template` against `message` as the email would carry it (without the tracking pixel);
   * 422 when rendering fails.
   */
  async renderWith(
    template: TemplateSource,
    message: MessageInput,
    accountId: number,
  ): Promise<ComposedEmail> {
    try {
      return await this.renderer.composeEmail({ ...message, template }, accountId);
    } catch (err) {
      if (err instanceof TemplateError) {
        throw new AppError(
          "UNPROCESSABLE_ENTITY",
          `The template could not be rendered${err.line ? ` (line ${err.line})` : ""}: ${err.message}`,
        );
      }
      throw err;
    }
  }

  private async check(
    accountId: number,
    body: Record<string, unknown>,
    creating: boolean,
  ): Promise<{ slug?: string; subject?: string; html?: string }> {
    const errors: Record<string, string[]> = {};
    const out: { slug?: string; subject?: string; html?: string } = {};
    const read = (key: "slug" | "subject" | "html", required: boolean, max: number) => {
      const v = body[key];
      if (v === undefined || v === null) {
        if (required) errors[key] = ["This field is required."];
        return;
      }
      if (typeof v !== "string") errors[key] = ["Not a valid string."];
      else if (v.length > max) errors[key] = [`Ensure this field has no more than ${max} characters.`];
      else out[key] = v;
    };
    read("slug", creating, 100);
    read("subject", false, MAX_SUBJECT);
    read("html", creating, MAX_HTML);
    if (out.slug !== undefined && (!SLUG.test(out.slug) || out.slug === "render")) {
      errors.slug = [
        'Enter a valid "slug" consisting of letters, numbers, underscores or hyphens ("render" is reserved).',
      ];
    }
    if (out.html !== undefined && out.html.trim() === "") errors.html = ["This field may not be blank."];
    for (const key of ["subject", "html"] as const) {
      const source = out[key];
      if (source === undefined || errors[key]) continue;
      let v: Awaited<ReturnType<typeof this.renderer.validate>>;
      try {
        v = await this.renderer.validate(source, accountId);
      } catch (err) {
        // The check itself stopped at a limit of the render pool (time, memory): the same 422 as a render.
        if (err instanceof TemplateError)
          throw new AppError("UNPROCESSABLE_ENTITY", `The template could not be rendered: ${err.message}`);
        throw err;
      }
      if (!v.ok) errors[key] = [`Template syntax error on line ${v.line}: ${v.message}`];
    }
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    return out;
  }

  private async record(
    trx: Executor,
    caller: TemplateCaller,
    code: (typeof AuditCode)[keyof typeof AuditCode],
    id: number,
    slug: string,
  ): Promise<void> {
    await this.audit.write(trx, {
      accountId: caller.accountId,
      code,
      apiKeyId: caller.applicationId,
      relatedModel: "email_template",
      relationKey: id,
      ...actorFields(caller.actor, slug),
    });
  }

  /** Merge data of a made-up pull request of the account, for previews without a request. */
  async sampleInput(ex: Executor, accountId: number): Promise<MessageInput> {
    const [account, recipientUrl] = await Promise.all([
      this.accounts.profile(ex, accountId),
      this.branding.recipientUrl(ex, accountId, "sample"),
    ]);
    const accountName = account?.name ?? "";
    const now = this.clock.now();
    const created = toTimestamp(now);
    const expires = toTimestamp(new Date(now.getTime() + 14 * 86_400_000));
    return {
      request: {
        id: 1,
        identifier: "sample",
        type: "pull",
        message: "Please upload a copy of your signed contract.",
        short_message: "",
        long_message_subject: "",
        long_message: "Please upload a copy of your signed contract.",
        is_draft: 0,
        complete: 0,
        is_expired: 0,
        receiver_message: null,
        email_template_slug: null,
        tfa_send_to: null,
        expires_at: expires,
        created,
        updated: created,
      },
      requester: {
        id: 1,
        first_name: "Alex",
        last_name: "Morgan",
        email: "alex.morgan@example.com",
        mobile: "+14155550100",
        company: "Example Ltd",
        role: "Account manager",
        location: "London",
        facebook: null,
        linkedin: "alexmorgan",
        twitter: null,
        skype: null,
      },
      account: { name: accountName, email: "" },
      contact: { first_name: "Jane", last_name: "Doe" },
      recipientUrl,
      sandbox: this.config.isSandbox,
    };
  }
}

function duplicateSlug(): ValidationError {
  return ValidationError.field("slug", "An email template with this slug already exists.");
}

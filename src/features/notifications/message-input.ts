import type { Executor } from "../../db/database.js";
import type { AccountsService } from "../auth/index.js";
import type { BrandingService } from "../branding/index.js";
import type { MediaService } from "../media/index.js";
import type { RequestersService } from "../requesters/index.js";
import type { RequestRow } from "../requests/index.js";
import type { EmailTemplatesService, MessageInput } from "../templates/index.js";

/** Where the merge data of a request's messages comes from. */
export interface MessageSources {
  accounts: AccountsService;
  requesters: Pick<RequestersService, "findForAccount">;
  templates: Pick<EmailTemplatesService, "sourceOf">;
  /** The recipient URL, on the account's custom host when it has one. */
  branding: Pick<BrandingService, "recipientUrl">;
  /** A push request's files (listed in the default email). */
  media: Pick<MediaService, "rowsOfRequests">;
  sandbox: boolean;
}

/** Gathers what composition needs about `request` for one contact (also used by previews). */
export async function gatherMessageInput(
  sources: MessageSources,
  ex: Executor,
  request: RequestRow,
  contact: { first_name: string; last_name: string },
): Promise<MessageInput> {
  const [account, requester, template, recipientUrl, media] = await Promise.all([
    sources.accounts.profile(ex, request.account_id),
    request.requester_id
      ? sources.requesters.findForAccount(ex, request.account_id, request.requester_id)
      : undefined,
    request.email_template_slug
      ? sources.templates.sourceOf(ex, request.account_id, request.email_template_slug)
      : undefined,
    sources.branding.recipientUrl(ex, request.account_id, request.identifier),
    request.type === "push" ? sources.media.rowsOfRequests(ex, [request.id]) : [],
  ]);
  const files = media
    .filter((m) => m.state === "available" && m.uploaded_by === "owner")
    .map((m) => ({ name: m.name, bytes: Number(m.bytes) }));
  return {
    request,
    requester,
    account: { name: account?.name ?? "", email: account?.email ?? "" },
    contact,
    recipientUrl,
    sandbox: sources.sandbox,
    template,
    files,
    // Neither contacts nor requests carry a language: messages follow the account's default (ADR 0033).
    locale: account?.defaultLanguage ?? "en",
  };
}

import type { EmailTemplateRow } from "./templates.repository.js";

/** The API Email Template object. */
export interface EmailTemplateView {
  id: number;
  slug: string;
  subject: string;
  html: string;
  created: string;
  updated: string;
}

/** Allow-lists an email template row. */
export function presentTemplate(row: EmailTemplateRow): EmailTemplateView {
  return {
    id: row.id,
    slug: row.slug,
    subject: row.subject,
    html: row.html,
    created: row.created,
    updated: row.updated,
  };
}

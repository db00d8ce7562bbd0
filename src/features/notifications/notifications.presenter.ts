import type { CapturedMessageRow, NotificationRow, SmtpSettingsRow } from "./notifications.repository.js";

/** The spec's Notification object inside a `contact_notification_send` callback. */
export interface NotificationView {
  id: number;
  was_sent: boolean;
  removed: boolean;
  contact_first_name: string;
  contact_last_name: string;
  contact_method_value: string;
  contact_method_interface_class: string;
  created: string;
  updated: string;
}

/** Allow-lists a notification row into the callback's Notification object. */
export function presentNotification(row: NotificationRow): NotificationView {
  return {
    id: row.id,
    was_sent: row.was_sent === 1,
    removed: row.removed === 1,
    contact_first_name: row.contact_first_name,
    contact_last_name: row.contact_last_name,
    contact_method_value: row.contact_method_value,
    contact_method_interface_class: row.contact_method_interface_class,
    created: row.created,
    updated: row.updated,
  };
}

/** A captured message as GET /v1/sandbox/messages/ lists it. */
export interface CapturedMessageView {
  id: number;
  channel: "email" | "sms";
  to: string;
  from: string;
  subject: string;
  text: string;
  html: string | null;
  links: string[];
  notification: number | null;
  created: string;
}

/** Allow-lists a captured message row. */
export function presentCapturedMessage(row: CapturedMessageRow): CapturedMessageView {
  return {
    id: row.id,
    channel: row.channel,
    to: row.to_address,
    from: row.from_address,
    subject: row.subject,
    text: row.text_body,
    html: row.html_body,
    links: JSON.parse(row.links) as string[],
    notification: row.notification_id,
    created: row.created,
  };
}

/** An account's SMTP settings as the API shows them: never the password, only whether one is set. */
export interface SmtpSettingsView {
  host: string;
  port: number;
  tls: "none" | "starttls" | "tls";
  username: string | null;
  has_password: boolean;
  from_email: string;
  created: string;
  updated: string;
}

/** Allow-lists SMTP settings (the password never leaves). */
export function presentSmtpSettings(row: SmtpSettingsRow): SmtpSettingsView {
  return {
    host: row.host,
    port: row.port,
    tls: row.tls,
    username: row.username,
    has_password: row.password_ciphertext !== null,
    from_email: row.from_email,
    created: row.created,
    updated: row.updated,
  };
}

import { defineJob } from "../../jobs/job.js";
import type { Sealed } from "./secret-box.js";

/** Delivers one notification (an email or SMS of a request's contact method). */
export const DeliverNotificationJob = defineJob<{ notification_id: number }>("notifications.deliver");

/** Sends one direct message (two-factor codes); the message is sealed under the key ring. */
export const DirectMessageJob = defineJob<{ account_id: number; sealed: Sealed }>("notifications.direct");

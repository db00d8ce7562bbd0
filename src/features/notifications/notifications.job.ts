import { DeliveryError } from "../../adapters/mailer/mailer.js";
import type { Container } from "../../app/container.js";
import { type JobHandler, PermanentJobError } from "../../jobs/worker.js";
import { DELIVER_JOB, DIRECT_JOB } from "./notifications.service.js";

/** The notification job kinds and their handlers (registered by src/app/jobs.ts). */
export function notificationJobHandlers(container: Container): [string, JobHandler][] {
  const { notifications } = container;
  return [
    [
      DELIVER_JOB,
      async (payload: { notification_id: number }, job) => {
        await notifications.deliver(payload.notification_id, {
          attempts: job.attempts,
          maxAttempts: job.max_attempts,
        });
      },
    ],
    [
      DIRECT_JOB,
      async (payload: { account_id: number; sealed: { kid: string; ciphertext: string } }) => {
        try {
          await notifications.deliverDirect(payload);
        } catch (err) {
          if (err instanceof DeliveryError && err.permanent) throw new PermanentJobError(err.message);
          throw err;
        }
      },
    ],
  ];
}

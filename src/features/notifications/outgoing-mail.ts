import { defaultFromAddress, type Mailer } from "../../adapters/mailer/mailer.js";
import type { Config } from "../../config/config.js";
import type { SmtpSettingsService } from "./smtp-settings.service.js";

/** The mail transports of emails: the account's own SMTP server when it set one, else the deployment's. */
export class OutgoingMail {
  constructor(
    private readonly config: Config,
    private readonly mailer: Mailer,
    private readonly smtpSettings: SmtpSettingsService,
  ) {}

  /** The mailer and From address for the account's emails. */
  async for(accountId: number): Promise<{ mailer: Mailer; from: string }> {
    const custom = await this.smtpSettings.mailerFor(accountId);
    return custom ?? { mailer: this.mailer, from: defaultFromAddress(this.config) };
  }

  /** Closes the transports. */
  async close(): Promise<void> {
    await this.mailer.close();
    await this.smtpSettings.close();
  }
}

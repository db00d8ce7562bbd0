/**
 * Notifications: emails delivered per second through the whole path (API send_notification →
 * outbox job → worker → SMTP to an in-process server), against raw nodemailer to the same server in the
 * same run (all its emails at once over a pool of 4 connections): once with the API calls made one at
 * a time, once with NOTIFICATIONS_BENCH_IN_FLIGHT (default 8) at a time, each with the serving
 * process's CPU time per email (every thread, the render pool's too); and template renders per second.
 */
import { createTransport } from "nodemailer";
import { createTemplateEngine } from "../src/features/templates/engine/template-engine.js";
import { startSmtpServer } from "../test/helpers/smtp.js";
import { type BenchModule, benchSeconds, cpuSeconds, report, startBenchFerry } from "./lib.js";

const EMAILS = Number(process.env.NOTIFICATIONS_BENCH_EMAILS ?? 300);
/** send_notification calls in flight in the concurrent run (NOTIFICATIONS_BENCH_IN_FLIGHT, default 8). */
const CALLS_IN_FLIGHT = Number(process.env.NOTIFICATIONS_BENCH_IN_FLIGHT ?? 8);

const TEMPLATE = `<html><body>
<h1>Hello {{ contact.first_name|title }},</h1>
<p>{{ requester.full_name }} ({{ requester.company|default:"Acme" }}) {% if type == "push" %}sent you files{% else %}asks you for files{% endif %}.</p>
<p>{{ long_message|linebreaksbr }}</p>
{% for i in (1..5) %}<p>Line {{ i }}: {{ message|truncatechars:40 }}</p>{% endfor %}
<p>Created {{ created|timezone:"Europe/London"|date:"l jS F Y, P T" }}; expires {{ expires_at|date:"D d M Y" }}.</p>
<p><a href="{{ recipient_url }}">Open</a></p>
</body></html>`;

async function rawSmtpRate(port: number, count: number): Promise<number> {
  const transport = createTransport({
    pool: true,
    maxConnections: 4,
    host: "127.0.0.1",
    port,
    ignoreTLS: true,
  });
  const start = performance.now();
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      transport.sendMail({
        from: "bench@example.com",
        to: `raw${i}@example.com`,
        subject: "Raw",
        text: "Hello",
        html: "<p>Hello</p>",
      }),
    ),
  );
  const seconds = (performance.now() - start) / 1000;
  transport.close();
  return count / seconds;
}

/** Renders per second of one template; `cacheEntries: 0` makes every render parse the source again. */
async function renderRate(cacheEntries?: number): Promise<number> {
  const engine = createTemplateEngine(cacheEntries === undefined ? {} : { cacheEntries });
  const context = {
    type: "pull",
    message: "Please upload last year's tax return and your passport.",
    long_message: "Hello,\nplease upload.\nThanks",
    contact: { first_name: "jane", last_name: "Doe" },
    requester: { full_name: "Alex Morgan", company: "" },
    created: "2026-01-15T10:00:00.000000Z",
    expires_at: "2026-01-29T10:00:00.000000Z",
    recipient_url: "https://ferry.example/r/abc/",
  };
  const deadline = performance.now() + benchSeconds * 1000;
  let n = 0;
  const start = performance.now();
  while (performance.now() < deadline) {
    await engine.render(TEMPLATE, context);
    n++;
  }
  return n / ((performance.now() - start) / 1000);
}

/** The notifications section of `npm run bench`. */
export const notificationsBench: BenchModule = {
  name: "notifications",
  async run() {
    const smtp = await startSmtpServer();
    const rawRate = await rawSmtpRate(smtp.port, EMAILS);
    report("ceiling: raw nodemailer → in-process SMTP", rawRate, "emails/s");
    smtp.messages.length = 0;
    const ferry = await startBenchFerry({
      SMTP_HOST: "127.0.0.1",
      SMTP_PORT: String(smtp.port),
      SMTP_TLS: "none",
      JOB_CONCURRENCY: "8",
    });
    try {
      const json = { ...ferry.headers, "content-type": "application/json" };
      let delivered = 0;
      /**
       * Creates EMAILS pull requests with one email contact each, then calls send_notification on
       * them, `inFlight` calls at a time, and waits until every email has reached the SMTP server.
       */
      const deliver = async (inFlight: number) => {
        const ids: number[] = [];
        for (let i = 0; i < EMAILS; i++) {
          const res = await fetch(`${ferry.base}/v1/request/`, {
            method: "POST",
            headers: json,
            body: JSON.stringify({
              type: "pull",
              message: "Please upload your documents.",
              contact: [
                {
                  first_name: "Jane",
                  contactmethod: [{ interface_class: "email", value: `j${i}@example.com` }],
                },
              ],
            }),
          });
          ids.push(((await res.json()) as { id: number }).id);
        }
        const pid = ferry.process.child.pid ?? 0;
        const cpuBefore = await cpuSeconds(pid);
        const start = performance.now();
        let next = 0;
        await Promise.all(
          Array.from({ length: inFlight }, async () => {
            while (next < ids.length) {
              const id = ids[next++];
              const res = await fetch(`${ferry.base}/v1/request/${id}/send_notification/`, {
                method: "POST",
                headers: json,
              });
              if (res.status !== 200) throw new Error(`send_notification ${res.status}: ${await res.text()}`);
            }
          }),
        );
        const accepted = EMAILS / ((performance.now() - start) / 1000);
        delivered += EMAILS;
        await smtp.waitFor(delivered, 300_000);
        const rate = EMAILS / ((performance.now() - start) / 1000);
        return { accepted, rate, cpuMs: (((await cpuSeconds(pid)) - cpuBefore) * 1000) / EMAILS };
      };
      // The worker runs in the serving process, so delivery and the API calls share its CPU.
      const sequential = await deliver(1);
      report("  send_notification calls accepted, one at a time", sequential.accepted, "calls/s");
      report("emails: API send_notification → job → SMTP, one call at a time", sequential.rate, "emails/s", {
        label: "raw SMTP",
        value: rawRate,
      });
      report("  server CPU per email, one call at a time", sequential.cpuMs, "ms");
      // The raw reference sends all its emails at once over its pool: callers at once here too.
      const concurrent = await deliver(CALLS_IN_FLIGHT);
      report(
        `  send_notification calls accepted, ${CALLS_IN_FLIGHT} at a time`,
        concurrent.accepted,
        "calls/s",
      );
      report(
        `emails: API send_notification → job → SMTP, ${CALLS_IN_FLIGHT} calls at a time`,
        concurrent.rate,
        "emails/s",
        { label: "raw SMTP", value: rawRate },
      );
      report(`  server CPU per email, ${CALLS_IN_FLIGHT} calls at a time`, concurrent.cpuMs, "ms");
    } finally {
      await ferry.stop();
      await smtp.close();
    }
    report("template renders (Liquid + Django filters, parsed once)", await renderRate(), "renders/s");
    report("template renders, parsing every time (cache off)", await renderRate(0), "renders/s");
  },
};

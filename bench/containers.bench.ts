/**
 * Containers and their sessions: the API sequence a pushpull integration runs per customer
 * (container, recipient, item, email, feature, send_notification) per second, against the bare
 * route's ceiling for six calls; the owner's reply poll;
 * session page views (HTML, audit AAA-0011 and ABB-0020 per view); and the chat poll of an open
 * session, with how many open sessions one node serves at the page's 5-second poll.
 */
import { type BenchModule, benchSeconds, report, requestsPerSecond, startBenchFerry } from "./lib.js";

const CHAT_POLL_SECONDS = 5;

export const containersBench: BenchModule = {
  name: "containers",
  async run({ bareRps }) {
    const ferry = await startBenchFerry({
      RECIPIENT_RATE_LIMIT_PER_IP: "100000000",
      RECIPIENT_RATE_LIMIT_PER_IDENTIFIER: "100000000",
    });
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${ferry.base}${path}`, {
        method: "POST",
        headers: { ...ferry.headers, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<Record<string, unknown> & { id: number }>;
    };
    /** One pushpull integration's calls; returns the container id and the item's session token. */
    const pushpullSequence = async () => {
      const c = await post("/v1/module_container/container/", { page_type: "pushpull", display_chat: true });
      const r = await post(`/v1/module_container/container/${c.id}/recipient/`, { first_name: "Jo" });
      await post(`/v1/module_container/recipient/${r.id}/recipient_item/`, {
        interface_class: "link",
        value: "1",
      });
      await post(`/v1/module_container/container/${c.id}/email/`, {
        subject: "Your documents",
        body: "Hello Jo,\nplease upload your ID.",
      });
      await post("/v1/module_container_pushpull/pushpullfeature/", {
        container: c.id,
        type: "pull",
        message: "ID",
      });
      const sent = (await post(
        `/v1/module_container/container/${c.id}/send_notification/`,
        {},
      )) as unknown as {
        link: string;
      }[];
      return { id: c.id, token: /\/s\/([^/]+)\//.exec(sent[0]!.link)![1]!, recipient: r.id };
    };
    try {
      const first = await pushpullSequence();
      // Four integrations at once, as many sequences as fit in the run.
      let sequences = 0;
      const until = Date.now() + benchSeconds * 1000;
      const started = Date.now();
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (Date.now() < until) {
            await pushpullSequence();
            sequences += 1;
          }
        }),
      );
      report("pushpull sequence (6 API calls)", sequences / ((Date.now() - started) / 1000), "sequences/s", {
        label: "bare route / 6",
        value: bareRps / 6,
      });

      await post("/v1/module_container/message/", { container: first.id, body: "Hello" });
      const poll = await requestsPerSecond(
        `${ferry.base}/v1/module_container/messagereply/?recipient__container=${first.id}`,
        { headers: ferry.headers },
      );
      report("GET messagereply/?recipient__container= (owner poll)", poll, "req/s", {
        label: "bare route",
        value: bareRps,
      });

      const page = `${ferry.base}/s/${first.token}/`;
      const views = await requestsPerSecond(page);
      report("GET /s/<token>/ (session page, audited)", views, "req/s", {
        label: "bare route",
        value: bareRps,
      });

      const chat = await requestsPerSecond(`${page}chat?after_message=1&after_reply=0`, {
        headers: { accept: "application/json" },
      });
      report("GET /s/<token>/chat (chat poll)", chat, "req/s", { label: "bare route", value: bareRps });
      report("open sessions one node serves at one poll per 5 s", chat * CHAT_POLL_SECONDS, "sessions");
    } finally {
      await ferry.stop();
    }
  },
};

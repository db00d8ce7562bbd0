/** Where capture transports (email and SMS) keep the messages they do not deliver. */

/** A message as the capture transports record it. */
export interface CapturedMessage {
  accountId: number;
  channel: "email" | "sms";
  to: string;
  from: string;
  subject: string;
  text: string;
  html: string | null;
  /** Absolute http(s) links found in the message (anchors of the HTML, URLs of the text), in order. */
  links: string[];
  notificationId: number | null;
}

/** Stores captured messages (implemented by the notifications repository); returns the stored id. */
export interface CaptureSink {
  capture(message: CapturedMessage): Promise<number>;
}

/** The distinct absolute links of a message: `href`s of the HTML first, then URLs in the text. */
export function extractLinks(text: string, html: string | null | undefined): string[] {
  const found: string[] = [];
  if (html) {
    for (const m of html.matchAll(/\bhref\s*=\s*(["'])(https?:\/\/[^"']+)\1/gi)) {
      found.push(decodeEntities(m[2]!));
    }
  }
  for (const m of text.matchAll(/https?:\/\/[^\s<>"')\]]+/g)) found.push(m[0]);
  return [...new Set(found)];
}

function decodeEntities(s: string): string {
  return s
    .replace(/&amp;/g, "&")
    .replace(/&quot;/g, '"')
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">");
}

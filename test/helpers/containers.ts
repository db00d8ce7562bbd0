/**
 * Containers for session tests, built through the API: a container, its recipients with one link
 * item each, features with their permissions, pushed files, and send_notification (which gives
 * every item its session link).
 */
import { type ApiCall, expectJson, type Json } from "./api.js";
import { multipart } from "./media.js";

export interface SessionRecipient {
  id: number;
  itemId: number;
  /** The session token of the recipient's link item. */
  token: string;
  /** `/s/<token>/` */
  base: string;
}

/** Creates a container (`p2` by default) and returns it. */
export async function buildContainer(call: ApiCall, fields: Json = {}): Promise<Json> {
  return expectJson(
    await call("POST", "/v1/module_container/container/", { page_type: "p2", ...fields }),
    201,
  );
}

/** Adds a recipient with a `link` item to a container; returns the ids. */
export async function addRecipient(
  call: ApiCall,
  containerId: number,
  names: { first_name?: string; last_name?: string } = {},
): Promise<{ id: number; itemId: number }> {
  const recipient = expectJson(
    await call("POST", `/v1/module_container/container/${containerId}/recipient/`, names),
    201,
  );
  const item = expectJson(
    await call("POST", `/v1/module_container/recipient/${recipient.id}/recipient_item/`, {
      interface_class: "link",
      value: `${recipient.id}`,
    }),
    201,
  );
  return { id: recipient.id, itemId: item.id };
}

/** Sends the container's notifications; returns each item's session token by item id. */
export async function sendContainer(call: ApiCall, containerId: number): Promise<Map<number, string>> {
  const answer = expectJson(
    await call("POST", `/v1/module_container/container/${containerId}/send_notification/`),
    200,
  ) as unknown as Json[];
  const tokens = new Map<number, string>();
  for (const row of answer) {
    const match = /\/s\/([^/]+)\/$/.exec(String(row.link));
    if (match) tokens.set(row.recipient_item, match[1]!);
  }
  return tokens;
}

/** The session of a recipient after send_notification. */
export function sessionOf(tokens: Map<number, string>, r: { id: number; itemId: number }): SessionRecipient {
  const token = tokens.get(r.itemId);
  if (!token) throw new Error(`item ${r.itemId} has no session link`);
  return { ...r, token, base: `/s/${token}/` };
}

/** Uploads a whole file to a push feature as the owner (POST /v1/module_container_push/pushfile/). */
export async function pushFile(call: ApiCall, pushId: number, name: string, data: Buffer): Promise<Json> {
  const body = multipart({ push: String(pushId), name }, { data, filename: name });
  return expectJson(
    await call("POST", "/v1/module_container_push/pushfile/", body.payload, {
      contentType: body.headers["content-type"]!,
    }),
    201,
  );
}

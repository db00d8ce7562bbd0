import type { Executor } from "../../db/database.js";
import type { AuthContext } from "../../shared/caller.js";
import { notFound, ValidationError } from "../../shared/errors.js";
import { parseId } from "../../shared/ids.js";
import { type Paginated, paginate, parsePageRequest } from "../../shared/pagination.js";
import {
  type Body,
  FieldErrors,
  isValidEmail,
  readBoolean,
  readPhone,
  readString,
  requireObjectBody,
  requireSmsCapable,
} from "../../shared/validation.js";
import { AuditCode } from "../audit/index.js";
import {
  type ContainerDeps,
  loadContainer,
  nowText,
  pathId,
  recordChange,
  sessionUrl,
} from "./containers.context.js";
import { presentItem, presentRecipient } from "./containers.presenter.js";
import {
  deleteItem,
  deleteRecipient,
  findItem,
  findRecipient,
  insertItem,
  insertRecipient,
  listItems,
  listRecipients,
  type RecipientItemRow,
  type RecipientRow,
  updateItem,
  updateRecipient,
} from "./containers.repository.js";

/** The channels of a recipient item: email and SMS are notified; a link is handed to the owner. */
export const ITEM_CLASSES = ["email", "sms", "link"] as const;
type ItemClass = (typeof ITEM_CLASSES)[number];

const NAME_MAX = 150;
const VALUE_MAX = 254;

/** Reads a recipient's names (each may be empty or missing; an email-looking name is fine). */
function readNames(body: Body, errors: FieldErrors) {
  const out: { firstName?: string; lastName?: string; active?: boolean } = {};
  const first = readString(body, "first_name", errors, { max: NAME_MAX, nullable: true });
  if (first !== undefined) out.firstName = first ?? "";
  const last = readString(body, "last_name", errors, { max: NAME_MAX, nullable: true });
  if (last !== undefined) out.lastName = last ?? "";
  const active = readBoolean(body, "active", errors);
  if (active !== undefined) out.active = active;
  return out;
}

/** Checks an item's value for its channel: an email address, an E.164 number, or any text for a link. */
function checkItemValue(cls: ItemClass, raw: unknown, errors: FieldErrors): string | undefined {
  if (raw === undefined || raw === null || raw === "") {
    if (cls === "link") return "";
    errors.add("value", "This field is required.");
    return undefined;
  }
  // A link's value is a label the owner chose; clients send numbers too: stored as text.
  const text = typeof raw === "number" && Number.isFinite(raw) ? String(raw) : raw;
  if (typeof text !== "string") {
    errors.add("value", "Not a valid string.");
    return undefined;
  }
  const value = text.trim();
  if (value.length > VALUE_MAX) {
    errors.add("value", `Ensure this field has no more than ${VALUE_MAX} characters.`);
    return undefined;
  }
  if (cls === "email" && !isValidEmail(value)) errors.add("value", "Enter a valid email address.");
  else if (cls === "sms") {
    const phone = readPhone(value);
    if ("e164" in phone) {
      requireSmsCapable(phone.e164, "value");
      return phone.e164;
    }
    errors.add("value", phone.error);
  } else return value;
  return errors.any ? undefined : value;
}

/**
 * Recipients of containers and their items (`/v1/module_container/recipient/`,
 * `/recipient_item/`, `/recipientitem/`). An item's `link` is its session URL, set when the
 * container's notifications are sent.
 */
export class RecipientsService {
  constructor(private readonly deps: ContainerDeps) {}

  /** The session URL of an item (null until notified). */
  async linkOf(ex: Executor, item: RecipientItemRow): Promise<string | null> {
    if (!item.session_token || !item.notified_at) return null;
    const host = await this.deps.branding.recipientHost(ex, item.account_id);
    return sessionUrl(this.deps.config.publicBaseUrl, host, item.session_token);
  }

  private async presentItems(ex: Executor, rows: RecipientItemRow[]) {
    const out: ReturnType<typeof presentItem>[] = [];
    for (const row of rows) out.push(presentItem(row, await this.linkOf(ex, row)));
    return out;
  }

  private async requireRecipient(
    ex: Executor,
    accountId: number,
    rawId: string | number,
  ): Promise<RecipientRow> {
    const row = await findRecipient(ex, accountId, pathId(rawId, "Recipient"));
    if (!row) throw notFound("Recipient");
    return row;
  }

  private async requireItem(
    ex: Executor,
    accountId: number,
    rawId: string | number,
  ): Promise<RecipientItemRow> {
    const row = await findItem(ex, accountId, pathId(rawId, "Recipient item"));
    if (!row) throw notFound("Recipient item");
    return row;
  }

  /** POST container/{id}/recipient/: adds a recipient. 201; ABA-0010. */
  async create(auth: AuthContext, rawContainerId: string, raw: unknown) {
    const { deps } = this;
    const input = this.readRecipient(raw);
    const containerId = pathId(rawContainerId, "Container");
    return deps.database.db.transaction().execute(async (trx) => {
      await loadContainer(deps, trx, auth.accountId, containerId);
      const now = nowText(deps);
      const row = await insertRecipient(trx, {
        account_id: auth.accountId,
        container_id: containerId,
        first_name: input.firstName ?? "",
        last_name: input.lastName ?? "",
        active: input.active === false ? 0 : 1,
        created: now,
        updated: now,
      });
      await recordChange(
        deps,
        trx,
        auth,
        AuditCode.ENTITY_CREATED,
        "recipient",
        row.id,
        `container ${containerId}`,
      );
      return presentRecipient(row);
    });
  }

  private readRecipient(raw: unknown) {
    const errors = new FieldErrors();
    const input = readNames(requireObjectBody(raw), errors);
    errors.throwIfAny();
    return input;
  }

  /** GET recipient/{id}. */
  async get(auth: AuthContext, rawId: string) {
    return presentRecipient(await this.requireRecipient(this.deps.database.db, auth.accountId, rawId));
  }

  /** GET recipient/: the account's recipients, oldest first; `container=<id>` keeps one container's. */
  async list(
    auth: AuthContext,
    query: Record<string, unknown>,
  ): Promise<Paginated<ReturnType<typeof presentRecipient>>> {
    const page = parsePageRequest(query);
    const containerId = optionalId(query.container, "container");
    const { rows, count } = await listRecipients(
      this.deps.database.db,
      auth.accountId,
      { containerId },
      {
        offset: page.offset,
        limit: page.pageSize,
      },
    );
    return paginate(
      rows.map(presentRecipient),
      count,
      page,
      this.deps.config.publicBaseUrl,
      "/v1/module_container/recipient/",
      {
        container: query.container,
      },
    );
  }

  /** PATCH recipient/{id}: names and `active`. ABA-0030. */
  async update(auth: AuthContext, rawId: string, raw: unknown) {
    const { deps } = this;
    const input = this.readRecipient(raw);
    return deps.database.db.transaction().execute(async (trx) => {
      const row = await this.requireRecipient(trx, auth.accountId, rawId);
      const updated = await updateRecipient(trx, row.id, {
        ...(input.firstName !== undefined ? { first_name: input.firstName } : {}),
        ...(input.lastName !== undefined ? { last_name: input.lastName } : {}),
        ...(input.active !== undefined ? { active: input.active ? 1 : 0 } : {}),
        updated: nowText(deps),
      });
      await recordChange(deps, trx, auth, AuditCode.ENTITY_UPDATED, "recipient", row.id, "");
      return presentRecipient(updated);
    });
  }

  /** DELETE recipient/{id}: with its items and replies. ABA-0020. */
  async delete(auth: AuthContext, rawId: string): Promise<void> {
    const { deps } = this;
    await deps.database.db.transaction().execute(async (trx) => {
      const row = await this.requireRecipient(trx, auth.accountId, rawId);
      await deleteRecipient(trx, row.id);
      await recordChange(deps, trx, auth, AuditCode.ENTITY_DELETED, "recipient", row.id, "");
    });
  }

  /** POST recipient/{id}/recipient_item/: `interface_class` (email, sms, link) and `value`. 201; ABA-0010. */
  async createItem(auth: AuthContext, rawRecipientId: string, raw: unknown) {
    const { deps } = this;
    const body = requireObjectBody(raw);
    const errors = new FieldErrors();
    const cls = readItemClass(body, errors, true);
    const value = cls ? checkItemValue(cls, body.value, errors) : undefined;
    errors.throwIfAny();
    return deps.database.db.transaction().execute(async (trx) => {
      const recipient = await this.requireRecipient(trx, auth.accountId, rawRecipientId);
      const now = nowText(deps);
      const row = await insertItem(trx, {
        account_id: auth.accountId,
        container_id: recipient.container_id,
        recipient_id: recipient.id,
        interface_class: cls!,
        value: value!,
        session_token: null,
        notified_at: null,
        created: now,
        updated: now,
      });
      await recordChange(deps, trx, auth, AuditCode.ENTITY_CREATED, "recipient_item", row.id, cls!);
      return presentItem(row, null);
    });
  }

  /** GET recipientitem/{id} (and recipient_item/{id}). */
  async getItem(auth: AuthContext, rawId: string) {
    const { db } = this.deps.database;
    const row = await this.requireItem(db, auth.accountId, rawId);
    return presentItem(row, await this.linkOf(db, row));
  }

  /** GET recipientitem/: filters `recipient` and `recipient__container`. */
  async listItems(auth: AuthContext, query: Record<string, unknown>) {
    const page = parsePageRequest(query);
    const recipientId = optionalId(query.recipient, "recipient");
    const containerId = optionalId(query.recipient__container, "recipient__container");
    const { db } = this.deps.database;
    const { rows, count } = await listItems(
      db,
      auth.accountId,
      { recipientId, containerId },
      {
        offset: page.offset,
        limit: page.pageSize,
      },
    );
    return paginate(
      await this.presentItems(db, rows),
      count,
      page,
      this.deps.config.publicBaseUrl,
      "/v1/module_container/recipientitem/",
      {
        recipient: query.recipient,
        recipient__container: query.recipient__container,
      },
    );
  }

  /** PATCH recipientitem/{id}: its channel and value (the session link stays). ABA-0030. */
  async updateItem(auth: AuthContext, rawId: string, raw: unknown) {
    const { deps } = this;
    const body = requireObjectBody(raw);
    return deps.database.db.transaction().execute(async (trx) => {
      const row = await this.requireItem(trx, auth.accountId, rawId);
      const errors = new FieldErrors();
      const cls = readItemClass(body, errors, false) ?? row.interface_class;
      const value =
        body.value !== undefined || cls !== row.interface_class
          ? checkItemValue(cls, body.value ?? row.value, errors)
          : undefined;
      errors.throwIfAny();
      const updated = await updateItem(trx, row.id, {
        interface_class: cls,
        ...(value !== undefined ? { value } : {}),
        updated: nowText(deps),
      });
      await recordChange(deps, trx, auth, AuditCode.ENTITY_UPDATED, "recipient_item", row.id, cls);
      return presentItem(updated, await this.linkOf(trx, updated));
    });
  }

  /** DELETE recipientitem/{id}: its session link stops working. ABA-0020. */
  async deleteItem(auth: AuthContext, rawId: string): Promise<void> {
    const { deps } = this;
    await deps.database.db.transaction().execute(async (trx) => {
      const row = await this.requireItem(trx, auth.accountId, rawId);
      await deleteItem(trx, row.id);
      await recordChange(deps, trx, auth, AuditCode.ENTITY_DELETED, "recipient_item", row.id, "");
    });
  }
}

function readItemClass(body: Body, errors: FieldErrors, required: boolean): ItemClass | undefined {
  const raw = readString(body, "interface_class", errors, { max: 20, required });
  if (raw === undefined || raw === null) return undefined;
  const v = raw.toLowerCase();
  if ((ITEM_CLASSES as readonly string[]).includes(v)) return v as ItemClass;
  errors.add("interface_class", `"${raw}" is not a valid choice. Choose email, sms or link.`);
  return undefined;
}

/** An optional integer filter of a list; 400 naming `field` when malformed. */
export function optionalId(raw: unknown, field: string): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const id = parseId(raw);
  if (id === undefined) throw ValidationError.field(field, "A valid integer is required.");
  return id;
}

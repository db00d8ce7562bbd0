import { type Selectable, sql } from "kysely";
import type { Executor } from "../../db/database.js";
import type { AccountsTable, ApplicationsTable } from "../../db/schema.js";

/** An account row. */
export type AccountRow = Selectable<AccountsTable>;
/** An application row (API key stored only as a hash). */
export type ApplicationRow = Selectable<ApplicationsTable>;

/** Inserts an account; the email must be unique (caller checks first). */
export async function insertAccount(
  ex: Executor,
  values: { email: string; name: string; now: string },
): Promise<AccountRow> {
  return ex
    .insertInto("accounts")
    .values({
      email: values.email,
      name: values.name,
      settings: "{}",
      created: values.now,
      updated: values.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Finds an account by email, compared case-insensitively. */
export async function findAccountByEmail(ex: Executor, email: string): Promise<AccountRow | undefined> {
  return ex
    .selectFrom("accounts")
    .selectAll()
    .where((eb) => eb(eb.fn("lower", ["email"]), "=", email.toLowerCase()))
    .executeTakeFirst();
}

/** Finds an account by id. */
export async function findAccountById(ex: Executor, id: number): Promise<AccountRow | undefined> {
  return ex.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Counts accounts (first-start detection). */
export async function countAccounts(ex: Executor): Promise<number> {
  const row = await ex
    .selectFrom("accounts")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Inserts an application with its key hash. */
export async function insertApplication(
  ex: Executor,
  values: {
    accountId: number;
    name: string;
    keyPrefix: string;
    keyHash: string;
    scopes: string;
    now: string;
  },
): Promise<ApplicationRow> {
  return ex
    .insertInto("applications")
    .values({
      account_id: values.accountId,
      name: values.name,
      key_prefix: values.keyPrefix,
      key_hash: values.keyHash,
      scopes: values.scopes,
      created: values.now,
      updated: values.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Finds an application by the SHA-256 of its key. */
export async function findApplicationByKeyHash(
  ex: Executor,
  keyHash: string,
): Promise<ApplicationRow | undefined> {
  return ex.selectFrom("applications").selectAll().where("key_hash", "=", keyHash).executeTakeFirst();
}

/** Finds an application by id. */
export async function findApplicationById(ex: Executor, id: number): Promise<ApplicationRow | undefined> {
  return ex.selectFrom("applications").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Marks an application revoked; returns false when it does not exist. */
export async function revokeApplicationRow(ex: Executor, id: number, now: string): Promise<boolean> {
  const res = await ex
    .updateTable("applications")
    .set({ revoked_at: now, updated: now })
    .where("id", "=", id)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Lists applications with their account email, oldest first; optionally for one account email. */
export async function listApplicationRows(
  ex: Executor,
  email?: string,
): Promise<(ApplicationRow & { email: string })[]> {
  let q = ex
    .selectFrom("applications")
    .innerJoin("accounts", "accounts.id", "applications.account_id")
    .selectAll("applications")
    .select("accounts.email")
    .orderBy("applications.id");
  if (email) q = q.where((eb) => eb(eb.fn("lower", ["accounts.email"]), "=", email.toLowerCase()));
  return q.execute();
}

/** Records that an application's key was just used. */
export async function touchApplication(ex: Executor, id: number, now: string): Promise<void> {
  await ex.updateTable("applications").set({ last_used_at: now }).where("id", "=", id).execute();
}

/** Replaces an account's settings JSON. */
export async function updateAccountSettings(
  ex: Executor,
  accountId: number,
  settings: string,
  now: string,
): Promise<void> {
  await ex.updateTable("accounts").set({ settings, updated: now }).where("id", "=", accountId).execute();
}

/** Sets the account's default language for recipients (a supported locale code). */
export async function updateAccountLanguage(
  ex: Executor,
  accountId: number,
  language: string,
  now: string,
): Promise<void> {
  await ex
    .updateTable("accounts")
    .set({ default_language: language, updated: now })
    .where("id", "=", accountId)
    .execute();
}

/** Renames an account (its name is shown on recipient pages). */
export async function updateAccountName(
  ex: Executor,
  accountId: number,
  name: string,
  now: string,
): Promise<void> {
  await ex.updateTable("accounts").set({ name, updated: now }).where("id", "=", accountId).execute();
}

/** The revocation epoch (migration 0033) as a string; "0" when the row is missing. */
export async function readRevocationEpoch(ex: Executor): Promise<string> {
  const row = await ex.selectFrom("revocation_epoch").select("epoch").where("id", "=", 1).executeTakeFirst();
  return row ? String(row.epoch) : "0";
}

/** Bumps the revocation epoch by one. */
export async function bumpRevocationEpoch(ex: Executor): Promise<void> {
  await ex.updateTable("revocation_epoch").set({ epoch: sql`epoch + 1` }).where("id", "=", 1).execute();
}

/**
 * Per-account provider connections (ADR 0063): for each enrichment kind the account picks a provider
 * (`local` when none is saved); the provider's settings are validated against its schema and sealed
 * with the key ring, never returned; each connection has its own webhook URL secret (stored sealed,
 * looked up by its SHA-256). A sandbox deployment accepts only test mode.
 */
import { createHash, randomBytes } from "node:crypto";
import { Type } from "typebox";
import { Value } from "typebox/value";
import type {
  EnrichmentProvider,
  ProviderSettings,
} from "../../adapters/enrichment-provider/enrichment-provider.js";
import type { Executor } from "../../db/database.js";
import type { AuthContext } from "../../shared/caller.js";
import { notFound, unprocessable, ValidationError } from "../../shared/errors.js";
import { parseId } from "../../shared/ids.js";
import { requireObjectBody } from "../../shared/validation.js";
import { AuditCode } from "../audit/index.js";
import { openSecret, sealSecret } from "../notifications/index.js";
import type { EnrichmentKind } from "./enrichment-kind.js";
import {
  type ConnectionRow,
  connectionForKind,
  deleteConnection,
  findConnection,
  findConnectionById,
  findEnrichment,
  insertConnection,
  listConnections,
  setConnectionCredentials,
} from "./enrichments.repository.js";
import type { EnrichmentsService } from "./enrichments.service.js";

const CREDENTIALS_LABEL = (id: string) => `provider-credentials:${id}`;
const WEBHOOK_LABEL = "provider-webhook-secret";

/** The SHA-256 (hex) of a webhook secret: the ingress's lookup key. */
export function webhookSecretHash(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** The ProviderConnection object: never the credentials; the webhook URL to give the vendor. */
export const ProviderConnectionSchema = Type.Object(
  {
    id: Type.Integer(),
    kind: Type.String({ description: "The enrichment kind (`esign`, ...)." }),
    provider: Type.String({ description: "The provider (`local`, `docusign`, ...)." }),
    mode: Type.Union([Type.Literal("test"), Type.Literal("live")]),
    has_credentials: Type.Boolean({ description: "Settings were saved (they are never returned)." }),
    webhook_url: Type.String({ description: "Where the provider posts its events for this account." }),
    created: Type.String({ format: "date-time" }),
    updated: Type.String({ format: "date-time" }),
  },
  { title: "ProviderConnection" },
);

/** The create input. */
export const ProviderConnectionInput = Type.Object(
  {
    kind: Type.String(),
    provider: Type.String(),
    mode: Type.Optional(Type.Union([Type.Literal("test"), Type.Literal("live")])),
    credentials: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { title: "ProviderConnectionInput", additionalProperties: false },
);

/** Builds the provider a feature or a connection uses (cached per connection and its `updated`). */
export interface ProviderResolver {
  /** The provider of feature `featureId` (its connection's, or the kind's `local`). */
  forFeature(ex: Executor, featureId: number): Promise<EnrichmentProvider>;
  /** The provider of a connection. */
  forConnection(connection: ConnectionRow): Promise<EnrichmentProvider>;
  /** Why a connection's settings cannot be used (its provider's own rules), or undefined. */
  problemOf(connection: ConnectionRow): string | undefined;
}

/** Connections and the providers built from them. */
export class ProviderConnections implements ProviderResolver {
  private readonly cache = new Map<string, EnrichmentProvider>();

  constructor(private readonly engine: EnrichmentsService) {}

  private get deps() {
    return this.engine.deps;
  }

  /** The API view of a connection. */
  present(row: ConnectionRow) {
    return {
      id: row.id,
      kind: row.kind,
      provider: row.provider,
      mode: row.mode === "live" ? ("live" as const) : ("test" as const),
      has_credentials: row.credentials !== null,
      webhook_url: `${this.deps.config.publicBaseUrl}/v1/providers/${row.provider}/webhook/${this.webhookSecret(row)}/`,
      created: row.created,
      updated: row.updated,
    };
  }

  /** The webhook secret of a connection (opened). */
  webhookSecret(row: ConnectionRow): string {
    return openSecret(
      this.deps.keyRing,
      { kid: row.webhook_secret_kid, ciphertext: row.webhook_secret },
      WEBHOOK_LABEL,
    );
  }

  private kindOf(name: string): EnrichmentKind {
    const kind = this.engine.kind(name);
    if (!kind) throw ValidationError.field("kind", `"${name}" is not an enrichment kind.`);
    return kind;
  }

  /**
   * POST: saves the account's provider for a kind (one per kind: 422 when one exists). 400 for an
   * unknown kind or provider, or settings the provider's schema refuses; 422 for live mode on a
   * sandbox deployment. 201; ABA-0010 (no settings in the audit).
   */
  async create(auth: AuthContext, raw: unknown) {
    const body = requireObjectBody(raw);
    const errors = [...Value.Errors(ProviderConnectionInput, body)];
    if (errors.length) {
      const field = errors[0]!.instancePath.split("/")[1] || "body";
      throw ValidationError.field(field, errors[0]!.message);
    }
    const kind = this.kindOf(String(body.kind));
    const provider = kind.providers[String(body.provider)];
    if (!provider)
      throw ValidationError.field(
        "provider",
        `"${String(body.provider)}" is not a provider of ${kind.name}.`,
      );
    const mode = body.mode === "live" ? "live" : "test";
    if (this.deps.config.isSandbox && mode === "live")
      throw unprocessable("A sandbox deployment uses providers in test mode only.");
    const credentials = (body.credentials ?? {}) as Record<string, unknown>;
    const schema = Type.Object(provider.credentials, { additionalProperties: false });
    const bad = [...Value.Errors(schema, credentials)];
    if (bad.length) {
      const field = bad[0]!.instancePath.replace(/^\//, "").replaceAll("/", ".");
      throw ValidationError.field(field ? `credentials.${field}` : "credentials", bad[0]!.message);
    }
    const secret = randomBytes(24).toString("base64url");
    const sealedSecret = sealSecret(this.deps.keyRing, secret, WEBHOOK_LABEL);
    const now = this.engine.now();
    return this.deps.database.db.transaction().execute(async (trx) => {
      if (await connectionForKind(trx, auth.accountId, kind.name))
        throw unprocessable(`The account has a ${kind.name} provider already: delete it first.`);
      const row = await insertConnection(trx, {
        account_id: auth.accountId,
        kind: kind.name,
        provider: provider.id,
        mode,
        credentials_kid: null,
        credentials: null,
        webhook_secret_hash: webhookSecretHash(secret),
        webhook_secret_kid: sealedSecret.kid,
        webhook_secret: sealedSecret.ciphertext,
        created: now,
        updated: now,
      });
      const sealed =
        Object.keys(credentials).length > 0
          ? sealSecret(this.deps.keyRing, JSON.stringify(credentials), CREDENTIALS_LABEL(String(row.id)))
          : undefined;
      const saved = sealed ? await setConnectionCredentials(trx, row.id, sealed) : row;
      await this.deps.audit.write(trx, {
        accountId: auth.accountId,
        code: AuditCode.ENTITY_CREATED,
        apiKeyId: auth.applicationId,
        relatedModel: "provider_connection",
        relationKey: row.id,
        value: `${kind.name} ${provider.id} ${mode}`,
      });
      return this.present(saved);
    });
  }

  /** GET list: the account's connections. */
  async list(auth: AuthContext) {
    return (await listConnections(this.deps.database.db, auth.accountId)).map((r) => this.present(r));
  }

  private async require(ex: Executor, auth: AuthContext, rawId: string): Promise<ConnectionRow> {
    const id = parseId(rawId);
    const row = id === undefined ? undefined : await findConnection(ex, auth.accountId, id);
    if (!row) throw notFound("Provider connection");
    return row;
  }

  /** GET one (404 when absent or foreign). */
  async get(auth: AuthContext, rawId: string) {
    return this.present(await this.require(this.deps.database.db, auth, rawId));
  }

  /** DELETE: new steps of the kind use `local` again; started steps keep their provider reference. ABA-0020. */
  async delete(auth: AuthContext, rawId: string): Promise<void> {
    await this.deps.database.db.transaction().execute(async (trx) => {
      const row = await this.require(trx, auth, rawId);
      await deleteConnection(trx, row.id);
      await this.deps.audit.write(trx, {
        accountId: auth.accountId,
        code: AuditCode.ENTITY_DELETED,
        apiKeyId: auth.applicationId,
        relatedModel: "provider_connection",
        relationKey: row.id,
        value: `${row.kind} ${row.provider}`,
      });
    });
  }

  // ---------------------------------------------------------------------------------------------
  // ProviderResolver

  /** Why a connection's settings cannot be used (its provider's own rules), or undefined. */
  problemOf(connection: ConnectionRow): string | undefined {
    const definition = this.engine.kind(connection.kind)?.providers[connection.provider];
    if (!definition) return `The provider "${connection.provider}" is not available.`;
    return definition.check?.(this.settingsOf(connection));
  }

  async forConnection(connection: ConnectionRow): Promise<EnrichmentProvider> {
    const key = `${connection.id}:${connection.updated}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const kind = this.engine.kind(connection.kind);
    const definition = kind?.providers[connection.provider];
    if (!definition) throw unprocessable(`The provider "${connection.provider}" is not available.`);
    const provider = (await definition.load())(this.settingsOf(connection));
    this.cache.set(key, provider);
    return provider;
  }

  private settingsOf(connection: ConnectionRow): ProviderSettings {
    const credentials = connection.credentials
      ? (JSON.parse(
          openSecret(
            this.deps.keyRing,
            { kid: connection.credentials_kid ?? "", ciphertext: connection.credentials },
            CREDENTIALS_LABEL(String(connection.id)),
          ),
        ) as Record<string, unknown>)
      : {};
    const settings: ProviderSettings = {
      mode: connection.mode === "live" ? "live" : "test",
      credentials,
      webhookSecret: this.webhookSecret(connection),
      publicBaseUrl: this.deps.config.publicBaseUrl,
      allowPrivateAddresses: this.deps.config.ENRICHMENT_PROVIDERS_ALLOW_PRIVATE,
    };
    return settings;
  }

  async forFeature(ex: Executor, featureId: number): Promise<EnrichmentProvider> {
    const own = await findEnrichment(ex, featureId);
    if (!own) throw notFound("Feature");
    const connection =
      own.connection_id === null ? undefined : await findConnectionById(ex, own.connection_id);
    if (connection) return this.forConnection(connection);
    const kind = this.engine.kind(own.kind);
    const local = kind?.providers.local;
    if (!local) throw unprocessable(`The ${own.kind} kind has no local provider.`);
    return (await local.load())({
      mode: "test",
      credentials: {},
      webhookSecret: "",
      publicBaseUrl: this.deps.config.publicBaseUrl,
    });
  }
}

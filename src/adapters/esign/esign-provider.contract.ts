/**
 * The behaviour every third-party EsignProvider must show against a fake of its vendor, as a vitest
 * suite. Each adapter's test file calls `runEsignProviderContract` with a fixture built on its fake.
 */
import { beforeEach, describe, expect, it } from "vitest";
import {
  type EsignProvider,
  EsignProviderError,
  ProviderRejectedError,
  ProviderUnavailableError,
} from "./esign-provider.js";

/** A provider wired to a fake vendor, and the controls of that fake the suite needs. */
export interface EsignContractFixture<Credentials> {
  provider: EsignProvider<Credentials>;
  /** Credentials reaching the fake. */
  credentials: Credentials;
  vendor: {
    /** The signer (by key) signs; the envelope completes when all have. */
    completeSigner(envelopeId: string, key: string): void;
    /** The signer declines with this reason. */
    declineSigner(envelopeId: string, key: string, reason: string): void;
    /** The bytes the vendor serves as the envelope's signed PDF. */
    signedPdf(envelopeId: string): Buffer;
    /** A webhook for the envelope's completion as the vendor sends it (or signed with a wrong key). */
    completionWebhook(
      envelopeId: string,
      options: { badSignature: boolean },
    ): Promise<{ rawBody: Buffer; headers: Record<string, string | string[] | undefined> }>;
    /** The next vendor call answers an outage (5xx) or a refusal of the input (4xx). */
    failNext(kind: "outage" | "refusal"): void;
    /** How many requests the vendor has received so far. */
    requests(): number;
  };
}

const PDF = Buffer.from(
  "%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n",
  "latin1",
);

const SIGNERS = [
  {
    key: "signer_a",
    name: "Ann Signer",
    email: "ann@example.test",
    routingOrder: 1,
    fields: [{ type: "signature" as const, page: 1, x: 72, y: 640, width: 160, height: 40 }],
  },
  {
    key: "signer_b",
    name: "Ben Signer",
    email: "ben@example.test",
    routingOrder: 1,
    fields: [{ type: "initials" as const, page: 1, x: 300, y: 640, width: 40, height: 30 }],
  },
];

/** Registers the shared esign provider suite under `name`; `make` is called before every test. */
export function runEsignProviderContract<Credentials>(
  name: string,
  make: () => Promise<EsignContractFixture<Credentials>>,
): void {
  describe(`EsignProvider contract: ${name}`, () => {
    let fixture: EsignContractFixture<Credentials>;
    let provider: EsignProvider<Credentials>;
    let credentials: Credentials;

    beforeEach(async () => {
      fixture = await make();
      ({ provider, credentials } = fixture);
    });

    async function create(): Promise<string> {
      const { envelopeId } = await provider.createEnvelope({
        credentials,
        documentPdf: new Uint8Array(PDF),
        documentName: "Agreement.pdf",
        signers: SIGNERS,
        envelopeKey: "feature_1",
      });
      expect(envelopeId).toMatch(/^\S{1,100}$/);
      return envelopeId;
    }

    async function rejection(promise: Promise<unknown>): Promise<EsignProviderError> {
      const error = await promise.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(EsignProviderError);
      return error as EsignProviderError;
    }

    it("accepts its fixture's credentials and refuses an empty object", () => {
      expect(provider.validateCredentials(credentials)).toEqual({ ok: true, credentials });
      expect(provider.validateCredentials({}).ok).toBe(false);
    });

    it("creates an envelope whose signers are all waiting", async () => {
      const envelopeId = await create();
      const state = await provider.fetchStatus({ credentials, envelopeId });
      expect(state.status).toBe("sent");
      expect(state.signers).toEqual([
        { key: "signer_a", status: "sent" },
        { key: "signer_b", status: "sent" },
      ]);
    });

    it("hands out a signing URL that expires within the hour", async () => {
      const envelopeId = await create();
      const before = Date.now();
      const { url, expiresAt } = await provider.signingUrl({
        credentials,
        envelopeId,
        signerKey: "signer_a",
        name: "Ann Signer",
        email: "ann@example.test",
        returnUrl: "https://ferry.test/return",
      });
      expect(new URL(url).protocol).toMatch(/^https?:$/);
      expect(expiresAt.getTime()).toBeLessThanOrEqual(before + 3600_000 + 60_000);
    });

    it("completes when every signer has signed, and serves the vendor's signed PDF", async () => {
      const envelopeId = await create();
      fixture.vendor.completeSigner(envelopeId, "signer_a");
      expect((await provider.fetchStatus({ credentials, envelopeId })).status).not.toBe("completed");
      fixture.vendor.completeSigner(envelopeId, "signer_b");
      const state = await provider.fetchStatus({ credentials, envelopeId });
      expect(state.status).toBe("completed");
      expect(
        state.signers.every((signer) => signer.status === "signed" && signer.signedAt instanceof Date),
      ).toBe(true);
      const pdf = await provider.fetchSignedPdf({ credentials, envelopeId });
      expect(Buffer.from(pdf).equals(fixture.vendor.signedPdf(envelopeId))).toBe(true);
    });

    it("reports a decline with the signer's reason", async () => {
      const envelopeId = await create();
      fixture.vendor.declineSigner(envelopeId, "signer_b", "Not my name.");
      const state = await provider.fetchStatus({ credentials, envelopeId });
      expect(state.status).toBe("declined");
      expect(state.signers.find((signer) => signer.key === "signer_b")).toMatchObject({
        status: "declined",
        declinedReason: "Not my name.",
      });
    });

    it("voids an open envelope and refuses to void a completed one", async () => {
      const open = await create();
      await provider.voidEnvelope({ credentials, envelopeId: open, reason: "Changed terms." });
      expect((await provider.fetchStatus({ credentials, envelopeId: open })).status).toBe("voided");

      const done = await create();
      fixture.vendor.completeSigner(done, "signer_a");
      fixture.vendor.completeSigner(done, "signer_b");
      const error = await rejection(
        provider.voidEnvelope({ credentials, envelopeId: done, reason: "Late." }),
      );
      expect(error).toBeInstanceOf(ProviderRejectedError);
      expect(error.reason).toBe("state_conflict");
    });

    it("verifies the vendor's webhook and refuses one signed with another key", async () => {
      const envelopeId = await create();
      const good = await fixture.vendor.completionWebhook(envelopeId, { badSignature: false });
      const verified = provider.verifyWebhook({ ...good, credentials });
      expect(verified).toMatchObject({ ok: true, event: { envelopeId, kind: "envelope_completed" } });
      const again = provider.verifyWebhook({ ...good, credentials });
      expect(again.ok && verified.ok && again.event.eventId === verified.event.eventId).toBe(true);

      const bad = await fixture.vendor.completionWebhook(envelopeId, { badSignature: true });
      expect(provider.verifyWebhook({ ...bad, credentials })).toEqual({ ok: false, reason: "bad_signature" });
    });

    it("maps an outage to a retryable ProviderUnavailableError and a refusal to ProviderRejectedError", async () => {
      const envelopeId = await create();
      fixture.vendor.failNext("outage");
      const outage = await rejection(provider.fetchStatus({ credentials, envelopeId }));
      expect(outage).toBeInstanceOf(ProviderUnavailableError);
      expect(outage).toMatchObject({ status: 503, retryable: true });

      fixture.vendor.failNext("refusal");
      const refusal = await rejection(
        provider.signingUrl({
          credentials,
          envelopeId,
          signerKey: "signer_a",
          name: "Ann Signer",
          email: "ann@example.test",
          returnUrl: "https://ferry.test/return",
        }),
      );
      expect(refusal).toBeInstanceOf(ProviderRejectedError);
      expect(refusal.retryable).toBe(false);
    });

    it("refuses bad input before calling the vendor", async () => {
      const before = fixture.vendor.requests();
      const error = await rejection(
        provider.createEnvelope({
          credentials,
          documentPdf: new Uint8Array(PDF),
          documentName: "Agreement.pdf",
          signers: [SIGNERS[0]!, { ...SIGNERS[1]!, key: "signer_a" }],
          envelopeKey: "feature_1",
        }),
      );
      expect(error).toMatchObject({ reason: "invalid_request", status: 422 });
      expect(fixture.vendor.requests()).toBe(before);
    });
  });
}

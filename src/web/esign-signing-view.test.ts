import { h } from "preact";
import { renderToString } from "preact-render-to-string";
import { describe, expect, it } from "vitest";
import { translator } from "../shared/i18n/i18n.js";
import { SIGNING_DATA_ID, type SigningData } from "./client/esign-data.js";
import { type SigningField, SigningView, signingMessages } from "./esign-signing-view.js";
import { signingPageCsp } from "./security-headers.js";

const FIELD: SigningField = {
  id: "f1",
  type: "text",
  page: 1,
  x: 10,
  y: 20,
  width: 100,
  height: 20,
  required: true,
  label: '</script><img src=x onerror="alert(1)">',
};

function render(locale: "en" | "fr" = "en"): string {
  return renderToString(
    h(SigningView, {
      i18n: translator(locale),
      pdfUrl: "/s/tok/esign/3/document.pdf",
      fields: [FIELD],
      actionUrl: "/s/tok/esign/3/finish",
      declineUrl: "/s/tok/esign/3/decline",
      csrfField: { name: "csrf_token", value: 't0k"en' },
      signerName: "Zoë <b>Doe</b>",
    }),
  );
}

function dataBlock(html: string): SigningData {
  const match = new RegExp(
    `<script type="application/json" id="${SIGNING_DATA_ID}">(.*?)</script>`,
    "s",
  ).exec(html);
  if (!match) throw new Error("no data block");
  return JSON.parse(match[1]!) as SigningData;
}

describe("the signing view", () => {
  it("renders both forms with the CSRF field, the values input, a required reason and a no-script note", () => {
    const html = render();
    expect(html).toContain('<form method="post" action="/s/tok/esign/3/finish" data-role="finish-form">');
    expect(html).toContain('<form method="post" action="/s/tok/esign/3/decline" data-role="decline-form">');
    expect(html.match(/<input type="hidden" name="csrf_token" value="t0k&quot;en"\/>/g)).toHaveLength(2);
    expect(html).toContain('<input type="hidden" name="values" value data-role="values"/>');
    expect(html).toMatch(/<textarea id="signing-decline-reason" class="fy-textarea" name="reason" required/);
    expect(html).toContain("<noscript>");
    expect(html).toContain('<script type="module" src="/static/esign.js"></script>');
    // Finish starts disabled: the script enables it once every required field is filled.
    expect(html).toMatch(/data-role="finish" disabled/);
  });

  it("escapes the signer's name and keeps a field label from closing the data block", () => {
    const html = render();
    expect(html).toContain("Zoë &lt;b>Doe&lt;/b>, read the document");
    expect(html).not.toContain("</script><img");
    const data = dataBlock(html);
    expect(data.fields).toEqual([FIELD]);
    expect(data.signerName).toBe("Zoë <b>Doe</b>");
    expect(data.pdfUrl).toBe("/s/tok/esign/3/document.pdf");
    expect(data.assets.worker).toMatch(/^\/static\/pdf\.worker\.mjs\?v=\d+\.\d+\.\d+$/);
  });

  it("carries the page's language and its signing messages to the script", () => {
    const data = dataBlock(render("fr"));
    expect(data.locale).toBe("fr");
    expect(data.format).toBe("fr-FR");
    expect(data.messages["signing.finish"]).toBe("Terminer");
    expect(Object.keys(data.messages).every((key) => key.startsWith("signing."))).toBe(true);
    expect(Object.keys(data.messages).sort()).toEqual(Object.keys(signingMessages("en")).sort());
  });
});

describe("the signing page's CSP", () => {
  it("adds the pdf.js worker and the signature and standard fonts to the branded page's policy, nothing else", () => {
    const csp = signingPageCsp({ hosts: ["ferry.test"], base: "/s/tok/" });
    expect(csp).toBe(
      "default-src 'none'; script-src 'self'; connect-src 'self'; worker-src 'self'; " +
        "style-src ferry.test/static/ ferry.test/s/tok/brand.css; " +
        "img-src ferry.test/static/ ferry.test/s/tok/logo ferry.test/s/tok/avatar data:; " +
        "font-src ferry.test/s/tok/fonts/ ferry.test/static/signature.woff2 ferry.test/static/signature-ext.woff2 ferry.test/static/pdfjs/standard_fonts/; " +
        "frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    );
  });

  it("names the fonts on every host the page may be reached by, and replaces font-src 'none'", () => {
    const csp = signingPageCsp({ hosts: ["a.test", "b.test:8080"], base: undefined });
    expect(csp).toContain(
      "font-src a.test/static/signature.woff2 a.test/static/signature-ext.woff2 a.test/static/pdfjs/standard_fonts/ " +
        "b.test:8080/static/signature.woff2 b.test:8080/static/signature-ext.woff2 b.test:8080/static/pdfjs/standard_fonts/;",
    );
    expect(csp).not.toContain("'none';  ");
    expect(csp).not.toMatch(/unsafe|wasm|blob:/);
  });
});

import { type MessageFormatElement, parse, TYPE } from "@formatjs/icu-messageformat-parser";
import { describe, expect, it } from "vitest";
import { en } from "./catalogues/en.js";
import {
  CATALOGUES,
  clientCatalogue,
  negotiateLocale,
  SUPPORTED_LOCALES,
  textDirection,
  translator,
} from "./i18n.js";

/** Every placeholder of a message (names, with their kind) and every select's options, sorted. */
function shapeOf(elements: MessageFormatElement[], out = new Set<string>()): Set<string> {
  for (const el of elements) {
    switch (el.type) {
      case TYPE.argument:
        out.add(`${el.value}:text`);
        break;
      case TYPE.number:
        out.add(`${el.value}:number`);
        break;
      case TYPE.date:
      case TYPE.time:
        out.add(`${el.value}:date`);
        break;
      case TYPE.select:
        out.add(`${el.value}:select(${Object.keys(el.options).sort().join(",")})`);
        for (const option of Object.values(el.options)) shapeOf(option.value, out);
        break;
      case TYPE.plural:
        out.add(`${el.value}:plural`);
        for (const option of Object.values(el.options)) shapeOf(option.value, out);
        break;
      case TYPE.tag:
        out.add(`<${el.value}>`);
        shapeOf(el.children, out);
        break;
      default:
        break;
    }
  }
  return out;
}

function pluralsWithoutOther(elements: MessageFormatElement[]): string[] {
  const missing: string[] = [];
  for (const el of elements) {
    if (el.type === TYPE.plural || el.type === TYPE.select) {
      if (!("other" in el.options)) missing.push(el.value);
      for (const option of Object.values(el.options)) missing.push(...pluralsWithoutOther(option.value));
    }
  }
  return missing;
}

describe("catalogues", () => {
  const keys = Object.keys(en).sort();

  it.each(SUPPORTED_LOCALES)("%s has exactly the keys of en", (locale) => {
    expect(Object.keys(CATALOGUES[locale]).sort()).toEqual(keys);
  });

  it.each(SUPPORTED_LOCALES)(
    "%s: every message parses, with en's placeholders and an other case",
    (locale) => {
      const problems: string[] = [];
      for (const key of keys) {
        const text = CATALOGUES[locale][key as keyof typeof en];
        let ast: MessageFormatElement[];
        try {
          ast = parse(text);
        } catch (error) {
          problems.push(`${key}: does not parse (${(error as Error).message})`);
          continue;
        }
        const want = [...shapeOf(parse(en[key as keyof typeof en]))].sort();
        const got = [...shapeOf(ast)].sort();
        if (JSON.stringify(want) !== JSON.stringify(got))
          problems.push(`${key}: placeholders ${got.join(" ")} instead of ${want.join(" ")}`);
        const missing = pluralsWithoutOther(ast);
        if (missing.length > 0) problems.push(`${key}: no "other" case for ${missing.join(", ")}`);
        if (text.trim() === "" || (locale !== "en" && /TODO|FIXME|\?\?\?/.test(text)))
          problems.push(`${key}: placeholder text`);
      }
      expect(problems).toEqual([]);
    },
  );

  it("translations are translated, not copies of the English source", () => {
    for (const locale of SUPPORTED_LOCALES.filter((l) => l !== "en")) {
      const same = keys.filter((k) => CATALOGUES[locale][k as keyof typeof en] === en[k as keyof typeof en]);
      // Only texts that read the same in the language (sizes, "{name}: {reason}", "Audio", ...) may match.
      expect(same.length, `${locale}: ${same.join(", ")}`).toBeLessThan(keys.length / 10);
    }
  });

  it("gives the page scripts only their own messages", () => {
    const client = Object.keys(clientCatalogue("es"));
    expect(client.length).toBeGreaterThan(30);
    expect(client.every((k) => k.startsWith("client.") || k.startsWith("size."))).toBe(true);
  });
});

describe("negotiateLocale", () => {
  it("prefers the reader's explicit choice, then Accept-Language, then the account default, then English", () => {
    expect(negotiateLocale({ choice: "fr", acceptLanguage: "es-ES,es;q=0.9", accountDefault: "de" })).toBe(
      "fr",
    );
    expect(negotiateLocale({ acceptLanguage: "es-ES,es;q=0.9,en;q=0.8", accountDefault: "de" })).toBe("es");
    expect(negotiateLocale({ acceptLanguage: "ja-JP,ja;q=0.9", accountDefault: "de" })).toBe("de");
    expect(negotiateLocale({ acceptLanguage: "*", accountDefault: "pt" })).toBe("pt");
    expect(negotiateLocale({ accountDefault: "xx" })).toBe("en");
    expect(negotiateLocale({})).toBe("en");
  });

  it("honours quality values and regional tags, and ignores unsupported or malformed choices", () => {
    expect(negotiateLocale({ acceptLanguage: "en;q=0.2, pt-BR;q=0.9, de;q=0.5" })).toBe("pt");
    expect(negotiateLocale({ acceptLanguage: "de-CH" })).toBe("de");
    expect(negotiateLocale({ choice: "klingon", acceptLanguage: "fr-CA" })).toBe("fr");
    expect(negotiateLocale({ acceptLanguage: ";;;,q=,", accountDefault: "es" })).toBe("es");
  });
});

describe("translator", () => {
  it("formats plurals, sizes and UTC dates per language", () => {
    expect(translator("en").t("files.summary", { count: 1, size: "1.5 KB" })).toBe("1 file · 1.5 KB");
    expect(translator("es").t("files.summary", { count: 3, size: "1,5 KB" })).toBe("3 archivos · 1,5 KB");
    expect(translator("en").bytes(0)).toBe("0 B");
    expect(translator("en").bytes(1500)).toBe("1.5 KB");
    expect(translator("de").bytes(31_600_000)).toBe("31,6 MB");
    expect(translator("fr").bytes(50_000_000)).toBe("50,0 Mo");
    expect(translator("en").date("2026-01-15T10:00:00.000000Z")).toBe("15 January 2026 at 10:00 UTC");
    expect(translator("es").date("2026-01-15T10:00:00.000000Z")).toMatch(/^15 de enero de 2026.*10:00 UTC$/);
    expect(translator("de").date("2026-01-15T10:00:00.000000Z")).toMatch(/^15\. Januar 2026.*10:00 UTC$/);
  });

  it("knows the writing direction of a language", () => {
    for (const locale of SUPPORTED_LOCALES) expect(translator(locale).dir).toBe("ltr");
    expect(textDirection("ar-EG")).toBe("rtl");
    expect(textDirection("he")).toBe("rtl");
  });
});

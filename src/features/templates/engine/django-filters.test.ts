// Expected strings are written by hand from Django's documented filter behaviour.
import { describe, expect, it } from "vitest";
import {
  escapeHtml,
  isDjangoFalsy,
  linebreaksbr,
  SafeHtml,
  titleCase,
  truncateChars,
  ZonedDateTime,
} from "./django-filters.js";

describe("escapeHtml", () => {
  it("escapes the five characters as Django does", () => {
    expect(escapeHtml(`<a href="x">Tom & Jerry's</a>`)).toBe(
      "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#x27;s&lt;/a&gt;",
    );
  });
});

describe("titleCase", () => {
  it.each([
    ["hello world", "Hello World"],
    ["HELLO WORLD", "Hello World"],
    ["they're bill's friends from the UK", "They're Bill's Friends From The Uk"],
    ["1st place", "1st Place"],
    ["o'NEIL", "O'Neil"],
    ["hello-world_foo.bar", "Hello-World_Foo.Bar"],
    ["élan VITAL", "Élan Vital"],
    ["ΟΔΟΣ", "Οδος"],
    ["straße", "Straße"],
    ["ßa", "Ssa"],
    ["", ""],
  ])("%j → %j", (input, expected) => {
    expect(titleCase(input)).toBe(expected);
  });
});

describe("truncateChars", () => {
  it.each([
    ["Joel is a slug", 7, "Joel i…"],
    ["Joel is a slug", 13, "Joel is a sl…"],
    ["Joel is a slug", 14, "Joel is a slug"],
    ["Joel is a slug", 100, "Joel is a slug"],
    ["Joel is a slug", 1, "…"],
    ["Joel is a slug", 0, ""],
    ["Joel is a slug", -3, ""],
    // Composed to NFC first; combining marks do not count.
    ["cafe\u0301s", 5, "caf\u00e9s"],
    ["ab\u0333cd", 4, "ab\u0333cd"],
    ["ab\u0333cd", 3, "ab\u0333…"],
    ["😀😀😀😀", 3, "😀😀…"],
  ])("%j truncated to %i → %j", (input, length, expected) => {
    expect(truncateChars(input, length)).toBe(expected);
  });
});

describe("linebreaksbr", () => {
  it("escapes, normalizes CRLF and CR, and marks the result safe", () => {
    const out = linebreaksbr("a<b>\r\nc\rd\ne & f");
    expect(out).toBeInstanceOf(SafeHtml);
    expect(String(out)).toBe("a&lt;b&gt;<br>c<br>d<br>e &amp; f");
  });

  it("does not escape SafeHtml twice", () => {
    expect(String(linebreaksbr(linebreaksbr("x\n<y>")))).toBe("x<br>&lt;y&gt;");
  });
});

describe("isDjangoFalsy", () => {
  it.each([null, undefined, false, 0, "", [], {}])("%j is false", (v) => {
    expect(isDjangoFalsy(v)).toBe(true);
  });
  it.each(["0", " ", 1, true, [0], { a: 1 }])("%j is true", (v) => {
    expect(isDjangoFalsy(v)).toBe(false);
  });
});

describe("ZonedDateTime", () => {
  it("prints Django's DATETIME_FORMAT in its zone", () => {
    expect(String(new ZonedDateTime("2026-03-08T06:59:59Z", "America/New_York"))).toBe(
      "March 8, 2026, 1:59 a.m.",
    );
    expect(String(new ZonedDateTime("2026-03-08T17:00:00Z", "UTC"))).toBe("March 8, 2026, 5 p.m.");
  });

  it("rejects an unknown zone", () => {
    expect(() => new ZonedDateTime("2026-03-08T06:59:59Z", "Nowhere/Town")).toThrow(RangeError);
  });
});

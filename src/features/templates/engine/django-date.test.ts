// Expected strings are written by hand from Django's documented `date` filter behaviour, not computed.
import { describe, expect, it } from "vitest";
import { formatDjangoDate, toInstant } from "./django-date.js";

type Row = readonly [value: string, timeZone: string, format: string, expected: string];

function check(rows: readonly Row[]): void {
  it.each(rows)("%s in %s formats %j as %j", (value, timeZone, format, expected) => {
    expect(formatDjangoDate(value, format, timeZone)).toBe(expected);
  });
}

// 2024-02-29 (leap day, a Thursday, ISO week 9, day 60) at 13:05:09.123456 UTC.
const LEAP_AFTERNOON = "2024-02-29T13:05:09.123456Z";

describe("every format character, leap day at 1 p.m. UTC", () => {
  check([
    [LEAP_AFTERNOON, "UTC", "a", "p.m."],
    [LEAP_AFTERNOON, "UTC", "A", "PM"],
    [LEAP_AFTERNOON, "UTC", "b", "feb"],
    [LEAP_AFTERNOON, "UTC", "c", "2024-02-29T13:05:09.123456+00:00"],
    [LEAP_AFTERNOON, "UTC", "d", "29"],
    [LEAP_AFTERNOON, "UTC", "D", "Thu"],
    [LEAP_AFTERNOON, "UTC", "e", "UTC"],
    [LEAP_AFTERNOON, "UTC", "E", "February"],
    [LEAP_AFTERNOON, "UTC", "f", "1:05"],
    [LEAP_AFTERNOON, "UTC", "F", "February"],
    [LEAP_AFTERNOON, "UTC", "g", "1"],
    [LEAP_AFTERNOON, "UTC", "G", "13"],
    [LEAP_AFTERNOON, "UTC", "h", "01"],
    [LEAP_AFTERNOON, "UTC", "H", "13"],
    [LEAP_AFTERNOON, "UTC", "i", "05"],
    [LEAP_AFTERNOON, "UTC", "I", "0"],
    [LEAP_AFTERNOON, "UTC", "j", "29"],
    [LEAP_AFTERNOON, "UTC", "l", "Thursday"],
    [LEAP_AFTERNOON, "UTC", "L", "True"],
    [LEAP_AFTERNOON, "UTC", "m", "02"],
    [LEAP_AFTERNOON, "UTC", "M", "Feb"],
    [LEAP_AFTERNOON, "UTC", "n", "2"],
    [LEAP_AFTERNOON, "UTC", "N", "Feb."],
    [LEAP_AFTERNOON, "UTC", "o", "2024"],
    [LEAP_AFTERNOON, "UTC", "O", "+0000"],
    [LEAP_AFTERNOON, "UTC", "P", "1:05 p.m."],
    [LEAP_AFTERNOON, "UTC", "r", "Thu, 29 Feb 2024 13:05:09 +0000"],
    [LEAP_AFTERNOON, "UTC", "s", "09"],
    [LEAP_AFTERNOON, "UTC", "S", "th"],
    [LEAP_AFTERNOON, "UTC", "t", "29"],
    [LEAP_AFTERNOON, "UTC", "T", "UTC"],
    [LEAP_AFTERNOON, "UTC", "u", "123456"],
    [LEAP_AFTERNOON, "UTC", "U", "1709211909"],
    [LEAP_AFTERNOON, "UTC", "w", "4"],
    [LEAP_AFTERNOON, "UTC", "W", "9"],
    [LEAP_AFTERNOON, "UTC", "y", "24"],
    [LEAP_AFTERNOON, "UTC", "Y", "2024"],
    [LEAP_AFTERNOON, "UTC", "z", "60"],
    [LEAP_AFTERNOON, "UTC", "Z", "0"],
  ]);
});

describe("every zone-dependent character, the same instant in New York (08:05:09 EST)", () => {
  check([
    [LEAP_AFTERNOON, "America/New_York", "a A f g G h H P", "a.m. AM 8:05 8 8 08 08 8:05 a.m."],
    [LEAP_AFTERNOON, "America/New_York", "c", "2024-02-29T08:05:09.123456-05:00"],
    [LEAP_AFTERNOON, "America/New_York", "r", "Thu, 29 Feb 2024 08:05:09 -0500"],
    [LEAP_AFTERNOON, "America/New_York", "e|T|O|Z|I", "EST|EST|-0500|-18000|0"],
    // The epoch timestamp does not depend on the zone.
    [LEAP_AFTERNOON, "America/New_York", "U", "1709211909"],
  ]);
});

describe("time of day: midnight, noon, 1 a.m., 1 p.m. and minutes", () => {
  const f = "a|A|f|g|G|h|H|i|s|P";
  check([
    ["2024-03-10T00:00:00Z", "UTC", f, "a.m.|AM|12|12|0|12|00|00|00|midnight"],
    ["2024-03-10T12:00:00Z", "UTC", f, "p.m.|PM|12|12|12|12|12|00|00|noon"],
    ["2024-03-10T01:00:00Z", "UTC", f, "a.m.|AM|1|1|1|01|01|00|00|1 a.m."],
    ["2024-03-10T13:00:00Z", "UTC", f, "p.m.|PM|1|1|13|01|13|00|00|1 p.m."],
    ["2024-03-10T00:30:00Z", "UTC", f, "a.m.|AM|12:30|12|0|12|00|30|00|12:30 a.m."],
    ["2024-03-10T12:30:45Z", "UTC", f, "p.m.|PM|12:30|12|12|12|12|30|45|12:30 p.m."],
    ["2024-03-10T11:07:00Z", "UTC", f, "a.m.|AM|11:07|11|11|11|11|07|00|11:07 a.m."],
    ["2024-03-10T23:59:59Z", "UTC", f, "p.m.|PM|11:59|11|23|11|23|59|59|11:59 p.m."],
  ]);
});

describe("ordinal suffixes", () => {
  check([
    ["2024-01-01T00:00:00Z", "UTC", "jS", "1st"],
    ["2024-01-02T00:00:00Z", "UTC", "jS", "2nd"],
    ["2024-01-03T00:00:00Z", "UTC", "jS", "3rd"],
    ["2024-01-04T00:00:00Z", "UTC", "jS", "4th"],
    ["2024-01-11T00:00:00Z", "UTC", "jS", "11th"],
    ["2024-01-12T00:00:00Z", "UTC", "jS", "12th"],
    ["2024-01-13T00:00:00Z", "UTC", "jS", "13th"],
    ["2024-01-21T00:00:00Z", "UTC", "jS", "21st"],
    ["2024-01-22T00:00:00Z", "UTC", "jS", "22nd"],
    ["2024-01-23T00:00:00Z", "UTC", "jS", "23rd"],
    ["2024-01-24T00:00:00Z", "UTC", "jS", "24th"],
    ["2024-01-30T00:00:00Z", "UTC", "jS", "30th"],
    ["2024-01-31T00:00:00Z", "UTC", "jS", "31st"],
    ["2024-01-05T00:00:00Z", "UTC", "dS", "05th"],
  ]);
});

describe("weekdays", () => {
  check([
    ["2024-01-01T09:00:00Z", "UTC", "D|l|w", "Mon|Monday|1"],
    ["2024-01-02T09:00:00Z", "UTC", "D|l|w", "Tue|Tuesday|2"],
    ["2024-01-03T09:00:00Z", "UTC", "D|l|w", "Wed|Wednesday|3"],
    ["2024-01-04T09:00:00Z", "UTC", "D|l|w", "Thu|Thursday|4"],
    ["2024-01-05T09:00:00Z", "UTC", "D|l|w", "Fri|Friday|5"],
    ["2024-01-06T09:00:00Z", "UTC", "D|l|w", "Sat|Saturday|6"],
    ["2024-01-07T09:00:00Z", "UTC", "D|l|w", "Sun|Sunday|0"],
  ]);
});

describe("months, including Associated Press style and days in month", () => {
  const f = "b|M|F|E|N|n|m|t";
  check([
    ["2023-01-15T09:00:00Z", "UTC", f, "jan|Jan|January|January|Jan.|1|01|31"],
    ["2023-02-15T09:00:00Z", "UTC", f, "feb|Feb|February|February|Feb.|2|02|28"],
    ["2023-03-15T09:00:00Z", "UTC", f, "mar|Mar|March|March|March|3|03|31"],
    ["2023-04-15T09:00:00Z", "UTC", f, "apr|Apr|April|April|April|4|04|30"],
    ["2023-05-15T09:00:00Z", "UTC", f, "may|May|May|May|May|5|05|31"],
    ["2023-06-15T09:00:00Z", "UTC", f, "jun|Jun|June|June|June|6|06|30"],
    ["2023-07-15T09:00:00Z", "UTC", f, "jul|Jul|July|July|July|7|07|31"],
    ["2023-08-15T09:00:00Z", "UTC", f, "aug|Aug|August|August|Aug.|8|08|31"],
    ["2023-09-15T09:00:00Z", "UTC", f, "sep|Sep|September|September|Sept.|9|09|30"],
    ["2023-10-15T09:00:00Z", "UTC", f, "oct|Oct|October|October|Oct.|10|10|31"],
    ["2023-11-15T09:00:00Z", "UTC", f, "nov|Nov|November|November|Nov.|11|11|30"],
    ["2023-12-15T09:00:00Z", "UTC", f, "dec|Dec|December|December|Dec.|12|12|31"],
  ]);
});

describe("years, leap years, day of year (1 to 366) and ISO-8601 weeks", () => {
  const f = "Y|y|L|z|W|o|D";
  check([
    ["2024-01-01T00:00:00Z", "UTC", f, "2024|24|True|1|1|2024|Mon"],
    ["2024-02-29T00:00:00Z", "UTC", f, "2024|24|True|60|9|2024|Thu"],
    ["2024-03-01T00:00:00Z", "UTC", f, "2024|24|True|61|9|2024|Fri"],
    ["2024-12-30T00:00:00Z", "UTC", f, "2024|24|True|365|1|2025|Mon"],
    ["2024-12-31T00:00:00Z", "UTC", f, "2024|24|True|366|1|2025|Tue"],
    ["2023-01-01T00:00:00Z", "UTC", f, "2023|23|False|1|52|2022|Sun"],
    ["2023-03-01T00:00:00Z", "UTC", f, "2023|23|False|60|9|2023|Wed"],
    ["2023-12-31T00:00:00Z", "UTC", f, "2023|23|False|365|52|2023|Sun"],
    ["2020-12-31T00:00:00Z", "UTC", f, "2020|20|True|366|53|2020|Thu"],
    ["2021-01-03T00:00:00Z", "UTC", f, "2021|21|False|3|53|2020|Sun"],
    ["2021-01-04T00:00:00Z", "UTC", f, "2021|21|False|4|1|2021|Mon"],
    ["2005-06-15T00:00:00Z", "UTC", f, "2005|05|False|166|24|2005|Wed"],
    ["0987-06-15T00:00:00Z", "UTC", "Y|y", "0987|87"],
    ["1900-02-01T00:00:00Z", "UTC", "L|t", "False|28"],
    ["2000-02-01T00:00:00Z", "UTC", "L|t", "True|29"],
    ["2100-02-01T00:00:00Z", "UTC", "L|t", "False|28"],
  ]);
});

describe("ISO 8601, RFC 5322, microseconds and epoch seconds", () => {
  check([
    ["2026-01-15T10:00:00Z", "UTC", "c", "2026-01-15T10:00:00+00:00"],
    ["2026-01-15T10:00:00.000001Z", "UTC", "c|u", "2026-01-15T10:00:00.000001+00:00|000001"],
    ["2026-01-15T10:00:00.5Z", "UTC", "u", "500000"],
    ["2026-01-15T10:00:00Z", "UTC", "r", "Thu, 15 Jan 2026 10:00:00 +0000"],
    ["2026-01-05T10:00:00Z", "Europe/Paris", "r", "Mon, 05 Jan 2026 11:00:00 +0100"],
    ["1970-01-01T00:00:00Z", "UTC", "U", "0"],
    ["2001-09-09T01:46:40Z", "UTC", "U", "1000000000"],
    ["2026-03-08T07:00:00Z", "UTC", "U", "1772953200"],
  ]);

  it("accepts a Date (millisecond precision) as well as a string", () => {
    expect(formatDjangoDate(new Date("2026-01-15T10:00:00.250Z"), "H:i:s.u")).toBe("10:00:00.250000");
  });
});

describe("daylight saving changes", () => {
  const f = "Y-m-d H:i:s T O Z I e";
  check([
    // New York springs forward at 02:00 EST = 07:00Z on 8 March 2026...
    ["2026-03-08T06:59:59Z", "America/New_York", f, "2026-03-08 01:59:59 EST -0500 -18000 0 EST"],
    ["2026-03-08T07:00:00Z", "America/New_York", f, "2026-03-08 03:00:00 EDT -0400 -14400 1 EDT"],
    // ...and falls back at 02:00 EDT = 06:00Z on 1 November 2026 (01:xx happens twice).
    ["2026-11-01T05:59:59Z", "America/New_York", f, "2026-11-01 01:59:59 EDT -0400 -14400 1 EDT"],
    ["2026-11-01T06:00:00Z", "America/New_York", f, "2026-11-01 01:00:00 EST -0500 -18000 0 EST"],
    // London: 01:00Z on 29 March 2026 and 25 October 2026.
    ["2026-03-29T00:59:59Z", "Europe/London", f, "2026-03-29 00:59:59 GMT +0000 0 0 GMT"],
    ["2026-03-29T01:00:00Z", "Europe/London", f, "2026-03-29 02:00:00 BST +0100 3600 1 BST"],
    ["2026-10-25T00:59:59Z", "Europe/London", f, "2026-10-25 01:59:59 BST +0100 3600 1 BST"],
    ["2026-10-25T01:00:00Z", "Europe/London", f, "2026-10-25 01:00:00 GMT +0000 0 0 GMT"],
    ["2026-03-08T06:59:59.123456Z", "America/New_York", "P|c", "1:59 a.m.|2026-03-08T01:59:59.123456-05:00"],
    ["2026-03-08T07:00:00Z", "America/New_York", "P|r", "3 a.m.|Sun, 08 Mar 2026 03:00:00 -0400"],
    // Southern hemisphere: summer time in January.
    ["2026-01-15T00:00:00Z", "Australia/Sydney", "H:i T O I", "11:00 AEDT +1100 1"],
    ["2026-07-15T00:00:00Z", "Australia/Sydney", "H:i T O I", "10:00 AEST +1000 0"],
  ]);
});

describe("zones with other offsets and the date changing with the zone", () => {
  check([
    ["2021-01-03T13:30:00Z", "Asia/Kolkata", "H:i O Z T", "19:00 +0530 19800 IST"],
    ["2021-01-03T13:30:00Z", "Asia/Kathmandu", "H:i O Z T", "19:15 +0545 20700 +0545"],
    ["2024-12-31T15:00:00Z", "Asia/Tokyo", "Y-m-d H:i z T O", "2025-01-01 00:00 1 JST +0900"],
    ["2024-12-31T15:00:00Z", "Asia/Tokyo", "e", "JST"],
    ["2024-12-31T15:00:00Z", "Asia/Kolkata", "e", "IST"],
    ["2024-01-01T03:00:00Z", "America/Los_Angeles", "Y-m-d H:i z T O", "2023-12-31 19:00 365 PST -0800"],
    ["2026-07-01T12:00:00Z", "Europe/Paris", "T", "CEST"],
    ["2026-07-01T12:00:00Z", "America/Sao_Paulo", "T O", "-03 -0300"],
  ]);
});

describe("backslash escapes and unknown characters", () => {
  check([
    ["2024-09-04T10:00:00Z", "UTC", "jS \\o\\f F", "4th of September"],
    ["2024-09-04T10:00:00Z", "UTC", "\\d\\a\\y d", "day 04"],
    // `\\d` (two backslashes): d follows a backslash so it is literal, and `\\` prints one backslash.
    ["2024-09-04T10:00:00Z", "UTC", "\\\\d", "\\d"],
    ["2024-09-04T10:00:00Z", "UTC", "\\\\Y", "\\Y"],
    ["2024-09-04T10:00:00Z", "UTC", "Y\\", "2024\\"],
    ["2024-09-04T10:00:00Z", "UTC", "BCJKQRVXkpqvx -/:,.!", "BCJKQRVXkpqvx -/:,.!"],
    ["2024-09-04T10:00:00Z", "UTC", "", ""],
    // Django's own documentation examples.
    ["2008-01-09T10:00:00Z", "UTC", "D d M Y", "Wed 09 Jan 2008"],
    ["2003-10-07T11:39:00Z", "UTC", "jS F Y H:i", "7th October 2003 11:39"],
  ]);
});

describe("input values", () => {
  it("reads ISO strings with offsets, without a zone (UTC) and date-only (midnight UTC)", () => {
    expect(formatDjangoDate("2026-03-08T01:59:59-05:00", "Y-m-d H:i:s")).toBe("2026-03-08 06:59:59");
    expect(formatDjangoDate("2026-03-08T01:59:59+0530", "Y-m-d H:i:s")).toBe("2026-03-07 20:29:59");
    expect(formatDjangoDate("2026-03-08 06:59:59", "Y-m-d H:i:s")).toBe("2026-03-08 06:59:59");
    expect(formatDjangoDate("2024-02-29", "Y-m-d H:i")).toBe("2024-02-29 00:00");
  });

  it("keeps microseconds that a Date would lose", () => {
    expect(toInstant("2026-03-08T06:59:59.123456Z")).toEqual({ epochMs: 1772953199123, extraMicros: 456 });
    expect(formatDjangoDate(toInstant("2026-03-08T06:59:59.123456Z"), "u")).toBe("123456");
  });

  it.each([
    "",
    "yesterday",
    "2024-02-30",
    "2023-13-01T00:00:00Z",
    "2024-01-01T24:00:00Z",
    "2024-01-01T10:00+25:00",
  ])("rejects %j with RangeError", (value) => {
    expect(() => formatDjangoDate(value, "Y")).toThrow(RangeError);
  });

  it("rejects an invalid Date and an unknown zone with RangeError", () => {
    expect(() => formatDjangoDate(new Date(Number.NaN), "Y")).toThrow(RangeError);
    expect(() => formatDjangoDate("2024-01-01", "Y", "Mars/Olympus_Mons")).toThrow(RangeError);
  });
});

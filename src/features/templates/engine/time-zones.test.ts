import { describe, expect, it } from "vitest";
import { isDaylightSavingTime, isValidTimeZone, zoneAbbreviation, zoneOffsetSeconds } from "./time-zones.js";

const JAN = Date.parse("2026-01-15T12:00:00Z");
const JUL = Date.parse("2026-07-15T12:00:00Z");

describe("zoneOffsetSeconds", () => {
  it("gives seconds east of Greenwich, including half and quarter hours", () => {
    expect(zoneOffsetSeconds(JAN, "UTC")).toBe(0);
    expect(zoneOffsetSeconds(JAN, "America/New_York")).toBe(-18000);
    expect(zoneOffsetSeconds(JUL, "America/New_York")).toBe(-14400);
    expect(zoneOffsetSeconds(JAN, "Asia/Kolkata")).toBe(19800);
    expect(zoneOffsetSeconds(JAN, "Asia/Kathmandu")).toBe(20700);
    expect(zoneOffsetSeconds(JAN, "America/St_Johns")).toBe(-12600);
  });
});

describe("zoneAbbreviation", () => {
  it.each([
    ["America/New_York", "EST", "EDT"],
    ["America/Los_Angeles", "PST", "PDT"],
    ["Europe/London", "GMT", "BST"],
    ["Europe/Dublin", "GMT", "IST"],
    ["Europe/Lisbon", "WET", "WEST"],
    ["Europe/Paris", "CET", "CEST"],
    ["Australia/Sydney", "AEDT", "AEST"],
    ["Asia/Jerusalem", "IST", "IDT"],
    ["Asia/Tokyo", "JST", "JST"],
    ["Asia/Kolkata", "IST", "IST"],
    ["Asia/Dubai", "+04", "+04"],
    ["Asia/Singapore", "+08", "+08"],
    ["America/Sao_Paulo", "-03", "-03"],
    ["Asia/Kathmandu", "+0545", "+0545"],
    ["UTC", "UTC", "UTC"],
    ["Etc/GMT", "GMT", "GMT"],
  ])("%s: %s in January, %s in July", (zone, january, july) => {
    expect(zoneAbbreviation(JAN, zone)).toBe(january);
    expect(zoneAbbreviation(JUL, zone)).toBe(july);
  });
});

describe("isDaylightSavingTime", () => {
  it("knows when daylight saving time is in force", () => {
    expect(isDaylightSavingTime(Date.parse("2026-07-15T12:00:00Z"), "America/New_York")).toBe(true);
    expect(isDaylightSavingTime(Date.parse("2026-01-15T12:00:00Z"), "America/New_York")).toBe(false);
    expect(isDaylightSavingTime(Date.parse("2026-07-15T12:00:00Z"), "Asia/Tokyo")).toBe(false);
  });
});

describe("isValidTimeZone", () => {
  it.each([
    ["Europe/London", true],
    ["UTC", true],
    ["Mars/Olympus_Mons", false],
    ["", false],
  ])("%j → %s", (zone, valid) => {
    expect(isValidTimeZone(zone)).toBe(valid);
  });
});

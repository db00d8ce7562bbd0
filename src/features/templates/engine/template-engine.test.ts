import { describe, expect, it } from "vitest";
import { createTemplateEngine, TemplateError } from "./template-engine.js";

const engine = createTemplateEngine();

const XSS = `<script>alert("x")</script>`;
const XSS_ESCAPED = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;";

async function renderError(source: string, context: Record<string, unknown> = {}, e = engine) {
  const err = await e.render(source, context).then(
    (out) => {
      throw new Error(`expected a TemplateError, rendered ${JSON.stringify(out)}`);
    },
    (caught: unknown) => caught,
  );
  expect(err).toBeInstanceOf(TemplateError);
  return err as TemplateError;
}

describe("Django-compatible merge tags and filters", () => {
  const ctx = { created: "2026-03-08T06:59:59.123456Z" };

  it.each([
    ['{{created|date:"d/m/Y"}}', "08/03/2026"],
    ['{{ created | date: "D d M Y" }}', "Sun 08 Mar 2026"],
    ['{{created|timezone:"America/New_York"|date:"H:i T"}}', "01:59 EST"],
    ['{{created|timezone:"Europe/London"|date:"H:i T"}}', "06:59 GMT"],
    ['{{created|timezone:"America/New_York"|date:"jS \\o\\f F Y, P"}}', "8th of March 2026, 1:59 a.m."],
    ['{{created|timezone:"UTC"|timezone:"Asia/Tokyo"|date:"Y-m-d H:i"}}', "2026-03-08 15:59"],
    ["{{created|date}}", "March 8, 2026"],
    ['{{created|timezone:"America/New_York"}}', "March 8, 2026, 1:59 a.m."],
    ['{{created|timezone:"Not/AZone"|date:"Y"}}', ""],
    ['{{"not a date"|date:"Y"}}', ""],
  ])("%s → %j", async (source, expected) => {
    expect(await engine.render(source, ctx)).toBe(expected);
  });

  it("formats across the London and New York daylight saving changes", async () => {
    const t =
      '{{ at|timezone:"Europe/London"|date:"H:i T" }} / {{ at|timezone:"America/New_York"|date:"H:i T" }}';
    expect(await engine.render(t, { at: "2026-03-29T00:59:59Z" })).toBe("00:59 GMT / 20:59 EDT");
    expect(await engine.render(t, { at: "2026-03-29T01:00:00Z" })).toBe("02:00 BST / 21:00 EDT");
    expect(await engine.render(t, { at: "2026-03-08T07:00:00Z" })).toBe("07:00 GMT / 03:00 EDT");
  });

  it("formats in the engine's default zone when no timezone filter is used", async () => {
    const ny = createTemplateEngine({ timeZone: "America/New_York" });
    expect(await ny.render('{{ created|date:"H:i T" }}', ctx)).toBe("01:59 EST");
  });

  it.each([
    ['{{ name|default:"friend" }}', { name: "" }, "friend"],
    ['{{ name|default:"friend" }}', { name: null }, "friend"],
    ['{{ name|default:"friend" }}', { name: 0 }, "friend"],
    ['{{ name|default:"friend" }}', { name: [] }, "friend"],
    ['{{ name|default:"friend" }}', { name: "Ann" }, "Ann"],
    ['{{ missing|default:"friend" }}', {}, "friend"],
    ["{{ name|upper }}", { name: "Ann Lee" }, "ANN LEE"],
    ["{{ name|lower }}", { name: "Ann Lee" }, "ann lee"],
    ["{{ name|title }}", { name: "they're bill's friends" }, "They&#x27;re Bill&#x27;s Friends"],
    ["{{ name|truncatechars:7 }}", { name: "Joel is a slug" }, "Joel i…"],
    ['{{ name|truncatechars:"7" }}', { name: "Joel is a slug" }, "Joel i…"],
    ['{{ name|truncatechars:"x" }}', { name: "Joel is a slug" }, "Joel is a slug"],
    ["{{ notes|linebreaksbr }}", { notes: "a <b>\r\nc" }, "a &lt;b&gt;<br>c"],
    ["{{ notes|linebreaksbr|upper }}", { notes: "a\nb" }, "A&lt;BR&gt;B"],
  ])("%s with %j → %j", async (source, context, expected) => {
    expect(await engine.render(source, context)).toBe(expected);
  });

  it("supports Django's if/elif/else, for/empty and comments", async () => {
    const t = [
      "{# a one-line comment #}{% comment %}a {{ block }} comment{% endcomment %}",
      "{% if n > 1 %}many{% elif n == 1 %}one{% else %}none{% endif %}",
      "{% for f in files %}{{ f }},{% empty %}no files{% endfor %}",
    ].join("|");
    expect(await engine.render(t, { n: 1, files: ["a", "b"] })).toBe("|one|a,b,");
    expect(await engine.render(t, { n: 0, files: [] })).toBe("|none|no files");
    expect(await engine.render(t, { n: 5, files: [] })).toBe("|many|no files");
  });

  it("treats empty strings and zero as false in if, as Django does", async () => {
    expect(await engine.render("{% if a %}y{% else %}n{% endif %}", { a: "" })).toBe("n");
    expect(await engine.render("{% if a %}y{% else %}n{% endif %}", { a: 0 })).toBe("n");
    expect(await engine.render("{% if missing %}y{% else %}n{% endif %}", {})).toBe("n");
  });
});

describe("escaping", () => {
  it("escapes HTML in merge values, whatever the filters", async () => {
    const ctx = { name: XSS };
    expect(await engine.render("{{ name }}", ctx)).toBe(XSS_ESCAPED);
    expect(await engine.render('{{ name|default:"x" }}', ctx)).toBe(XSS_ESCAPED);
    expect(await engine.render("{{ name|truncatechars:100 }}", ctx)).toBe(XSS_ESCAPED);
    expect(await engine.render('{{ name|append:"" }}', ctx)).toBe(XSS_ESCAPED);
    expect(await engine.render("{% echo name %}", ctx)).toBe(XSS_ESCAPED);
    expect(await engine.render('{% cycle name, "b" %}', ctx)).toBe(XSS_ESCAPED);
    expect(await engine.render("{% assign y = name %}{{ y }}", ctx)).toBe(XSS_ESCAPED);
    expect(await engine.render("{{ name|upper }}", ctx)).toBe(
      "&lt;SCRIPT&gt;ALERT(&quot;X&quot;)&lt;/SCRIPT&gt;",
    );
  });

  it("keeps template markup, escapes values inside capture exactly once", async () => {
    const out = await engine.render("{% capture c %}<b>{{ name }}</b>{% endcapture %}{{ c }}", {
      name: "O'Neil & <i>",
    });
    expect(out).toBe("<b>O&#x27;Neil &amp; &lt;i&gt;</b>");
  });

  it("escapes linebreaksbr input and does not escape its <br> again", async () => {
    expect(await engine.render("{{ v|linebreaksbr }}", { v: `${XSS}\nline 2` })).toBe(
      `${XSS_ESCAPED}<br>line 2`,
    );
  });

  it("offers no filter that prints a value unescaped", async () => {
    const err = await renderError("{{ name|raw }}", { name: XSS });
    expect(err.message).toContain("raw");
    await renderError("{{ name|safe }}", { name: XSS });
  });
});

describe("no access beyond the merge data", () => {
  it.each([
    "{{ name.constructor }}",
    "{{ name.__proto__ }}",
    "{{ contact.constructor }}",
    "{{ contact.__proto__ }}",
    "{{ contact.constructor.name }}",
    "{{ contact.hasOwnProperty }}",
    "{{ files.constructor }}",
    "{{ files.__proto__ }}",
    "{{ contact.toString }}",
  ])("%s is an error, never a function", async (source) => {
    const ctx = { name: "Ann", contact: { first_name: "Ann" }, files: ["a"] };
    const err = await renderError(source, ctx);
    expect(err.message).toMatch(/undefined variable/);
    expect(err.line).toBe(1);
  });

  it.each([
    '{% include "/etc/passwd" %}',
    "{% include '../../package.json' %}",
    '{% render "/etc/passwd" %}',
    "{% render %}",
    '{% layout "x" %}',
  ])("%s is refused", async (source) => {
    const err = await renderError(source);
    expect(err.line).toBe(1);
    expect(engine.validate(source)).toMatchObject({ ok: false, line: 1 });
  });

  it("does not modify the caller's merge data", async () => {
    const ctx = { count: "x", contact: { first_name: "Ann" } };
    await engine.render(
      "{% increment count %}{% assign contact = 1 %}{% capture name %}z{% endcapture %}",
      ctx,
    );
    expect(ctx).toEqual({ count: "x", contact: { first_name: "Ann" } });
  });
});

describe("limits", () => {
  it("stops a huge nested loop (memory limit)", async () => {
    const err = await renderError(
      "{% for i in (1..100000000) %}{% for j in (1..100000000) %}x{% endfor %}{% endfor %}",
    );
    expect(err.message).toMatch(/limit/);
  });

  it("stops a long loop that allocates and prints nothing (time limit)", async () => {
    const quick = createTemplateEngine({ timeLimitMs: 20 });
    const big = Array.from({ length: 10_000 }, (_, i) => i);
    const err = await renderError(
      "{% for a in big %}{% for b in big %}{% endfor %}{% endfor %}",
      { big },
      quick,
    );
    expect(err.message).toMatch(/time limit/);
  });

  it("stops output over maxOutputBytes, counting UTF-8 bytes", async () => {
    const small = createTemplateEngine({ maxOutputBytes: 100 });
    expect(await small.render("{% for i in (1..100) %}x{% endfor %}", {})).toHaveLength(100);
    expect(await small.render("{% for i in (1..50) %}é{% endfor %}", {})).toHaveLength(50);
    const err = await renderError("{% for i in (1..101) %}x{% endfor %}", {}, small);
    expect(err.message).toMatch(/output is larger than 100 bytes/);
    await renderError("{% for i in (1..51) %}é{% endfor %}", {}, small);
    await renderError("{{ v }}", { v: "y".repeat(101) }, small);
  });

  it("stops output growing through capture", async () => {
    const small = createTemplateEngine({ maxOutputBytes: 1000 });
    const t =
      '{% assign s = "abcdefghij" %}{% for i in (1..30) %}{% capture s %}{{ s }}{{ s }}{% endcapture %}{% endfor %}';
    await renderError(t, {}, small);
  });

  it("rejects a template over maxTemplateLength", async () => {
    const short = createTemplateEngine({ maxTemplateLength: 10 });
    const err = await renderError("01234567890", {}, short);
    expect(err.message).toMatch(/longer than 10 characters/);
    expect(short.validate("0123456789")).toEqual({ ok: true });
  });
});

describe("errors carry their line", () => {
  it.each([
    ["Hello\n\n{% if x %}\nno end", 3, /not closed/],
    ["line 1\n{{ name | nosuchfilter }}", 2, /undefined filter: nosuchfilter/],
    ["line 1\nline 2\n{% nosuchtag %}", 3, /nosuchtag/],
    ["{{ unclosed", 1, /not closed/],
    ["ok\n{% for %}{% endfor %}", 2, /illegal tag/],
  ])("%j: line %i", async (source, line, message) => {
    const err = await renderError(source, { x: 1, name: "a" });
    expect(err.line).toBe(line);
    expect(err.message).toMatch(message);
    expect(err.message).not.toMatch(/line:/);
    const v = engine.validate(source);
    expect(v).toEqual({ ok: false, line, message: err.message });
  });

  it("reports an unknown variable with its line when rendering", async () => {
    const err = await renderError("Dear {{ first_name }},\n{{ lastname }}", { first_name: "Ann" });
    expect(err).toMatchObject({ line: 2, message: "undefined variable: lastname" });
  });

  it("validates a correct template", () => {
    expect(
      engine.validate('{{ created|timezone:"Europe/London"|date:"H:i T" }}{% if a %}{% elif b %}{% endif %}'),
    ).toEqual({
      ok: true,
    });
  });
});

describe("parsed template cache", () => {
  const stateful =
    "{% increment n %}{% increment n %}|{% cycle 'a', 'b' %}{% cycle 'a', 'b' %}|" +
    "{% capture who %}<b>{{ name }}</b>{% endcapture %}{{ who }}|{% for i in (1..4) limit:2 %}{{ i }}{% endfor %}" +
    "{% for i in (1..4) offset:continue %}{{ i }}{% endfor %}";

  it("renders a cached template afresh each time: no state or merge data carried between renders", async () => {
    const first = await engine.render(stateful, { name: "Ann" });
    expect(first).toBe("01|ab|<b>Ann</b>|1234");
    expect(await engine.render(stateful, { name: "<Bo>" })).toBe("01|ab|<b>&lt;Bo&gt;</b>|1234");
    const concurrent = await Promise.all(["x", "y", "z"].map((name) => engine.render(stateful, { name })));
    expect(concurrent).toEqual(["01|ab|<b>x</b>|1234", "01|ab|<b>y</b>|1234", "01|ab|<b>z</b>|1234"]);
  });

  it("keeps rendering correctly when templates are evicted or caching is off", async () => {
    for (const e of [createTemplateEngine({ cacheEntries: 1 }), createTemplateEngine({ cacheEntries: 0 })]) {
      for (let i = 0; i < 3; i++) {
        expect(await e.render("A {{ v }}", { v: i })).toBe(`A ${i}`);
        expect(await e.render("B {{ v|upper }}", { v: "b" })).toBe("B B");
      }
    }
    const small = createTemplateEngine({ cacheChars: 4 });
    expect(await small.render("longer than four {{ v }}", { v: 1 })).toBe("longer than four 1");
    expect(await small.render("longer than four {{ v }}", { v: 2 })).toBe("longer than four 2");
  });

  it("still reports errors of a template that was parsed before", async () => {
    const source = "{{ known }} {{ unknown }}";
    expect(engine.validate(source)).toEqual({ ok: true });
    expect((await renderError(source, { known: 1 })).message).toBe("undefined variable: unknown");
    expect(await engine.render(source, { known: 1, unknown: 2 })).toBe("1 2");
  });
});

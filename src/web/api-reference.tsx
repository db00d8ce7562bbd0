/**
 * The API reference at `/docs`: the OpenAPI document rendered on the server as one plain page
 * (semantic HTML, the pages' stylesheet, no script), so it works under the strict CSP and passes
 * the accessibility checks the recipient pages pass. The machine-readable document stays at
 * `/v1/openapi.json`.
 */
import type { VNode } from "preact";
import { Layout, renderDocument } from "./layout.js";

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is read loosely, field by field.
type Json = Record<string, any>;

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

interface Operation {
  method: string;
  path: string;
  op: Json;
  anchor: string;
}

/** A schema in a few words: `string`, `integer`, `array of Contact`, `string | null`, `object`. */
function typeOf(schema: Json | undefined): string {
  if (!schema) return "";
  if (schema.$ref) return String(schema.$ref).split("/").pop() ?? "object";
  if (Array.isArray(schema.anyOf ?? schema.oneOf))
    return (schema.anyOf ?? schema.oneOf).map((s: Json) => typeOf(s)).join(" | ");
  if (Array.isArray(schema.type)) return schema.type.join(" | ");
  if (schema.type === "array") return `array of ${typeOf(schema.items) || "values"}`;
  if (schema.enum) return schema.enum.map((v: unknown) => JSON.stringify(v)).join(" | ");
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.type === "string" && schema.format) return `string (${schema.format})`;
  return schema.type ?? (schema.properties ? "object" : "any");
}

/**
 * Text with Markdown inline code (`like this`) as <code> elements; everything else stays text
 * (escaped by preact). An unpaired backtick is kept as it is.
 */
export function inlineCode(text: string): (string | VNode)[] {
  return text
    .split(/(`[^`\n]+`)/)
    .map((part) =>
      part.length > 2 && part.startsWith("`") && part.endsWith("`") ? <code>{part.slice(1, -1)}</code> : part,
    );
}

/** A schema's fields one level deep, as a description list. */
function Fields(props: { schema: Json | undefined; components: Json }): VNode | null {
  let schema = props.schema;
  if (schema?.$ref) schema = props.components[String(schema.$ref).split("/").pop() ?? ""] ?? schema;
  if (schema?.type === "array" && schema.items?.properties) schema = schema.items;
  const properties: Json = schema?.properties ?? {};
  const required = new Set<string>(schema?.required ?? []);
  const names = Object.keys(properties);
  if (names.length === 0) return <p class="fy-muted">{typeOf(props.schema) || "No body."}</p>;
  return (
    <dl class="fy-api-fields">
      {names.map((name) => (
        <div>
          <dt>
            <code>{name}</code> <span class="fy-muted">{typeOf(properties[name])}</span>
            {required.has(name) ? <span class="fy-api-required"> required</span> : null}
          </dt>
          {properties[name]?.description ? <dd>{inlineCode(String(properties[name].description))}</dd> : null}
        </div>
      ))}
    </dl>
  );
}

function OperationView(props: { operation: Operation; components: Json }): VNode {
  const { op, method, path, anchor } = props.operation;
  const parameters: Json[] = op.parameters ?? [];
  const body: Json | undefined = op.requestBody?.content;
  const responses: Json = op.responses ?? {};
  return (
    <section class="fy-card fy-api-op" id={anchor} aria-labelledby={`${anchor}-title`}>
      <h3 id={`${anchor}-title`}>
        <span class={`fy-api-method fy-api-${method}`}>{method.toUpperCase()}</span> <code>{path}</code>
      </h3>
      {op.summary ? <p>{inlineCode(String(op.summary))}</p> : null}
      {op.description && op.description !== op.summary ? <p>{inlineCode(String(op.description))}</p> : null}
      {op.operationId ? (
        <p class="fy-muted">
          Operation <code>{String(op.operationId)}</code>
          {op.security?.length === 0 ? " · no authentication" : ""}
        </p>
      ) : null}
      {parameters.length > 0 ? (
        <>
          <h4>Parameters</h4>
          <dl class="fy-api-fields">
            {parameters.map((p) => (
              <div>
                <dt>
                  <code>{String(p.name)}</code>{" "}
                  <span class="fy-muted">
                    {String(p.in)} · {typeOf(p.schema)}
                  </span>
                  {p.required ? <span class="fy-api-required"> required</span> : null}
                </dt>
                {p.description || p.schema?.description ? (
                  <dd>{inlineCode(String(p.description ?? p.schema.description))}</dd>
                ) : null}
              </div>
            ))}
          </dl>
        </>
      ) : null}
      {body
        ? Object.entries(body).map(([type, content]) => (
            <>
              <h4>
                Body <span class="fy-muted">({type})</span>
              </h4>
              <Fields schema={(content as Json).schema} components={props.components} />
            </>
          ))
        : null}
      <h4>Responses</h4>
      <dl class="fy-api-fields">
        {Object.entries(responses).map(([status, response]) => (
          <div>
            <dt>
              <code>{status}</code>
            </dt>
            <dd>{inlineCode(String((response as Json).description ?? ""))}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

/** The reference page of `doc` (an OpenAPI 3 document), as an HTML document string. */
export function renderApiReference(doc: Json): string {
  const byTag = new Map<string, Operation[]>();
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Json)) {
    for (const method of METHODS) {
      const op = (item as Json)[method] as Json | undefined;
      if (!op) continue;
      const tag = String(op.tags?.[0] ?? "other");
      const anchor = `op-${String(op.operationId ?? `${method}-${path}`).replace(/[^A-Za-z0-9_-]+/g, "-")}`;
      const list = byTag.get(tag) ?? [];
      list.push({ method, path, op, anchor });
      byTag.set(tag, list);
    }
  }
  const components: Json = doc.components?.schemas ?? {};
  const tagAnchor = (tag: string) => `tag-${tag.replace(/[^A-Za-z0-9_-]+/g, "-")}`;
  return renderDocument(
    <Layout
      title="API reference"
      sandbox={false}
      brandName="Ferry"
      footer="Generated from the OpenAPI document this server serves at /v1/openapi.json."
    >
      <h1>{String(doc.info?.title ?? "API reference")}</h1>
      <section class="fy-card" aria-labelledby="api-intro">
        <h2 id="api-intro">About</h2>
        {doc.info?.description ? <p>{inlineCode(String(doc.info.description))}</p> : null}
        <p>
          Version {String(doc.info?.version ?? "")}. Machine-readable document:{" "}
          <a href="/v1/openapi.json">/v1/openapi.json</a> (OpenAPI {String(doc.openapi ?? "3")}).
        </p>
      </section>
      <nav class="fy-card" aria-labelledby="api-contents">
        <h2 id="api-contents">Contents</h2>
        <ul class="fy-api-toc">
          {[...byTag.entries()].map(([tag, ops]) => (
            <li>
              <a href={`#${tagAnchor(tag)}`}>{tag}</a> <span class="fy-muted">({ops.length})</span>
            </li>
          ))}
        </ul>
      </nav>
      {[...byTag.entries()].map(([tag, ops]) => (
        <section aria-labelledby={tagAnchor(tag)}>
          <h2 id={tagAnchor(tag)}>{tag}</h2>
          {ops.map((operation) => (
            <OperationView operation={operation} components={components} />
          ))}
        </section>
      ))}
    </Layout>,
  );
}

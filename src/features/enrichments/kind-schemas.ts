import { type TSchema, Type } from "typebox";
import { featureCommon, featureInputCommon } from "../containers/index.js";
import type { EnrichmentKind } from "./enrichment-kind.js";

/** `/v1/module_container_<module>/<resource>/` of a kind. */
export function kindPath(kind: EnrichmentKind): string {
  return `/v1/module_container_${kind.module}/${kind.resource}/`;
}

/** The named schemas of a kind: its object, its create input and its update input. */
export function kindSchemas(kind: EnrichmentKind): KindSchemas {
  let schemas = built.get(kind);
  if (!schemas) {
    schemas = buildSchemas(kind);
    built.set(kind, schemas);
  }
  return schemas;
}

/** A kind's named schemas. */
export interface KindSchemas {
  object: TSchema;
  input: TSchema;
  update: TSchema | undefined;
}

const built = new WeakMap<EnrichmentKind, KindSchemas>();

function buildSchemas(kind: EnrichmentKind): KindSchemas {
  const object = Type.Object(
    {
      ...featureCommon,
      title: Type.String(),
      description: Type.String(),
      feature_attr: Type.Literal(kind.name),
      status: Type.Union(
        kind.statuses.map((s) => Type.Literal(s)),
        { description: "The kind's own status; a final one comes with `state: complete`." },
      ),
      provider: Type.String({ description: "The provider of the step (`local`: Ferry itself)." }),
      ...kind.presentedFields,
    },
    { title: kind.schemaName },
  );
  const common = {
    ...featureInputCommon,
    title: Type.Optional(Type.String({ maxLength: 255 })),
    description: Type.Optional(Type.String({ maxLength: 20_000 })),
  };
  const input = Type.Object(
    { ...common, ...kind.createFields },
    { title: `${kind.schemaName}Input`, additionalProperties: false },
  );
  const update = kind.updateFields
    ? Type.Object(
        { ...Type.Partial(Type.Object(common)).properties, ...kind.updateFields },
        { title: `${kind.schemaName}UpdateInput`, additionalProperties: false },
      )
    : undefined;
  return { object, input, update };
}

import { Type, type Static } from "@sinclair/typebox";
import { AGG_OPS, DEFAULT_LIMITS, FILTER_OPS } from "./types.js";

/**
 * The log query body for both routes (OpenAPI and the route's first check). The schema
 * holds the shape; `compileLogQuery` re-checks everything itself (it takes `unknown`) and
 * owns the rules a schema states badly: field paths, op/value pairs, nesting depth and
 * cost limits (list lengths are stated here too, so a list of thousands is refused by the
 * cheaper check). Nested `or`/`and` items are left open here on purpose: a recursive schema
 * needs an $id, which clashes when both routes compile it into the same ajv.
 */
const FieldText = Type.String({ minLength: 1, maxLength: 600, description: "type, timestamp, trace, payload or a dotted payload path such as payload.symptoms.0.score (array indexes 0-based)" });
/** A string enum rather than a union of literals: ajv then reports one "allowed values" error, not one per op. */
const OneOf = (values: readonly string[]) => Type.String({ enum: [...values] });
const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);
/** A trace in the form the batch route takes; filters read it as `object_type:object_id`. */
const TraceObject = Type.Object({ object_type: Type.String(), object_id: Type.String() }, { additionalProperties: false });

const FilterNode = Type.Object(
  {
    field: Type.Optional(FieldText),
    op: Type.Optional(OneOf(FILTER_OPS)),
    value: Type.Optional(Type.Union([Scalar, Type.Null(), TraceObject, Type.Array(Type.Union([Type.String(), Type.Number(), TraceObject]), { maxItems: DEFAULT_LIMITS.maxInList })], {
      description: "eq…lte: string/number (boolean for eq, neq); in/nin: list; like/ilike: pattern with % and _; is: null or \"not_null\"; exists: boolean; contains: array element or substring; on trace, {object_type, object_id} reads as object_type:object_id",
    })),
    or: Type.Optional(Type.Array(Type.Unknown(), { minItems: 1, maxItems: DEFAULT_LIMITS.maxConditions, description: "Filter nodes, any of which holds" })),
    and: Type.Optional(Type.Array(Type.Unknown(), { minItems: 1, maxItems: DEFAULT_LIMITS.maxConditions, description: "Filter nodes, all of which hold" })),
  },
  { additionalProperties: false, description: 'A condition {"field","op","value"} or a group {"or":[…]} / {"and":[…]}' },
);

const Alias = Type.String({ pattern: "^(?!__proto__$)[A-Za-z_][A-Za-z0-9_]{0,63}$" });

/** `{path, alias?}`, or the array form when any of first, where, element is given. */
const SelectItem = Type.Object(
  {
    path: FieldText,
    alias: Type.Optional(Alias),
    first: Type.Optional(Type.Boolean({ description: "Array select: true answers the first kept element (null when none), false the list ([] when none)" })),
    where: Type.Optional(Type.Union([FilterNode, Type.Array(FilterNode, { minItems: 1, maxItems: DEFAULT_LIMITS.maxConditions })], {
      description: "Array select: keeps the elements this filter node (or list of nodes, ANDed) holds for; its fields are paths inside the element (the array's own path is the element itself)",
    })),
    element: Type.Optional(Type.String({ minLength: 1, maxLength: 600, description: "Array select: the path read from each kept element, e.g. name" })),
  },
  { additionalProperties: false, description: "A field, answered under alias else path; with first/where/element, an array in the payload (path) filtered and read per element" },
);

export const QueryBodySchema = Type.Object(
  {
    patient_ids: Type.Optional(Type.Array(
      Type.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9_-]+$", description: "A service patient id (pat_...): letters, digits, _ and -, at most 64 characters" }),
      { minItems: 1, maxItems: DEFAULT_LIMITS.maxInList, description: `Cohort (organization route); omit for the whole organization. At most ${DEFAULT_LIMITS.maxInList}.` },
    )),
    filter: Type.Optional(Type.Array(FilterNode, { maxItems: DEFAULT_LIMITS.maxConditions, description: `Conditions, ANDed (at most ${DEFAULT_LIMITS.maxConditions} in all, groups included)` })),
    select: Type.Optional(Type.Array(SelectItem, { minItems: 1, maxItems: 64 })),
    order: Type.Optional(Type.Array(Type.Object({ field: FieldText, desc: Type.Optional(Type.Boolean()) }, { additionalProperties: false }), { minItems: 1, maxItems: 8 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, description: "Rows (or groups). @default 100, at most 1000 by default" })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
    group_by: Type.Optional(Type.Array(FieldText, { minItems: 1, maxItems: 8 })),
    aggregations: Type.Optional(Type.Array(
      Type.Object({ op: OneOf(AGG_OPS), field: Type.Optional(FieldText), alias: Alias }, { additionalProperties: false }),
      { minItems: 1, maxItems: 32 },
    )),
    count: Type.Optional(Type.Boolean({ description: "Answer {count} only, no rows" })),
    include_total: Type.Optional(Type.Boolean({ description: "Add total_count (rows or groups matching, ignoring limit/offset)" })),
    single: Type.Optional(Type.Boolean({ description: "Exactly one row, else 422" })),
    maybe_single: Type.Optional(Type.Boolean({ description: "Zero or one row, else 422" })),
    typed: Type.Optional(Type.Boolean({ description: "Rows as typed log entries; not with select" })),
  },
  { additionalProperties: false },
);

export type QueryBody = Static<typeof QueryBodySchema>;

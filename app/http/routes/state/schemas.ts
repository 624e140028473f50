import { Type } from "@sinclair/typebox";
import { Nullable, OpenObject } from "../../schemas.js";
import { AppError, fieldIssue } from "../../../../src/errors.js";
import { resolveLogType } from "../../../../catalog/index.js";
import { isLeapSecond, isoMs, LEAP_SECOND_REFUSED } from "../../../../query/filter.js";
import { horizonOf } from "../../../../src/state/as-of-read.js";
import type { Horizon } from "../../../../readmodels/as-of.js";

export const PatientParams = Type.Object({ pid: Type.String({ minLength: 1, maxLength: 64, description: "Patient id" }) });

export const ModuleRead = Type.Object({
  module_type: Type.String(),
  payload: OpenObject,
  created_at: Nullable(Type.String({ description: "Event time of the first log that changed the module" })),
  updated_at: Nullable(Type.String({ description: "Event time of the latest log that changed the module" })),
});

const Trace = Nullable(
  Type.Object(
    { object_type: Nullable(Type.String()), object_id: Type.String() },
    { description: "A trace sent as a string reads as object_type null, object_id the string" },
  ),
);

export const LogRowSchema = Type.Object({
  id: Type.String(),
  type: Type.String(),
  timestamp: Type.String(),
  ingested_at: Type.String(),
  payload: OpenObject,
  trace: Trace,
  metadata: Type.Optional(Type.Union([OpenObject, Type.Null()], { description: "With include_metadata=true: the log's metadata (a FHIR-made log's source resource is metadata.fhir_resource)" })),
});

export const EventRowSchema = Type.Object({
  id: Type.String(),
  trigger: Type.String(),
  log_type: Type.String(),
  status: Type.String({ description: "applied (changed state) or no_change (changed nothing); both are complete" }),
  triggered_at: Type.String({ description: "When the log was accepted" }),
  completed_at: Type.String({ description: "When it was applied" }),
  source_event_log_id: Type.String(),
  changes: Type.Array(
    Type.Object({ module_type: Type.String(), kind: Type.String(), op: Type.String(), fields: Type.Optional(Type.Array(Type.String())) }),
  ),
});

export const ViewWindowSchema = Type.Object(
  {
    days: Type.Integer({ description: "Days in the week segment: 7" }),
    first_day: Nullable(Type.String({ description: "Its first day, YYYY-MM-DD in the patient's time zone" })),
    last_day: Nullable(Type.String({ description: "Its last day: the day of the read, in the patient's time zone" })),
    time_zone: Type.String({ description: "The patient's IANA time zone the days are counted in" }),
  },
  { description: "The days the week segment covers, counted back from the time of the read (null days for an empty view read with no time)" },
);

export const BlockSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  text: Type.String(),
  segment: Type.String({ description: "week, long_term or temp" }),
  refs: Type.Array(Type.String(), { description: "Ids of the logs the block's facts came from" }),
  data: Type.Unknown(),
  template_ref: Type.Object({ block_id: Type.String() }, { description: "The template block this block fills: its id" }),
  result: Type.Object(
    { id: Type.String(), name: Type.String(), content: Type.String() },
    { description: "The block's id, name and text again, where the hosted product's clients read them" },
  ),
});

/** A comma-separated list in a query string (`?modules=a,b`), or the same key repeated (`?log_types=a&log_types=b`). */
export const csv = (v: string | readonly string[] | undefined): string[] | undefined => {
  const items = (typeof v === "string" ? [v] : (v ?? [])).flatMap((x) => x.split(",")).map((x) => x.trim()).filter(Boolean);
  return items.length === 0 ? undefined : items;
};

export const RecentItemSchema = Type.Object({
  timestamp: Type.String({ description: "Event time of the log, UTC" }),
  module_type: Type.String(),
  kind: Type.String({ description: "A log type or a finer label (dose, lab_value, conversation_summary, ...)" }),
  summary: Type.String(),
  log_id: Type.String(),
});

/** Two lists of one filter under two names: either's items (undefined when neither is given). */
export const eitherList = (a: string[] | undefined, b: string[] | undefined): string[] | undefined =>
  a === undefined ? b : b === undefined ? a : [...new Set([...a, ...b])];

/** A list parameter that may be repeated: one string, or an array of them. */
export const ListParam = (description: string) => Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 100 })], { description });

/**
 * `log_ids`: a ListParam without the schema's item bound, so that 101 ids repeated get
 * logIdsParam's message, as 101 comma-separated do, rather than the schema's "must match
 * a schema in anyOf". The URL's length (Node's 16 kB of headers) bounds the items.
 */
export const LogIdsParam = (description: string) => Type.Union([Type.String(), Type.Array(Type.String())], { description });

/**
 * `since`/`until` as the log query builder reads them: an ISO 8601 datetime with an
 * offset, or a bare date meaning that day's UTC midnight. Answers the UTC instant.
 */
export function instantParam(v: string | undefined, name: string): string | undefined {
  if (v === undefined) return undefined;
  // The log query's reading of a bound (isoMs), and its refusal of a leap second.
  const ms = isoMs(v);
  if (ms === undefined) {
    const message = isLeapSecond(v) ? LEAP_SECOND_REFUSED : "must be an ISO 8601 datetime with a UTC offset (2026-03-01T09:30:00Z) or a date (UTC midnight)";
    throw new AppError("validation", `${name} ${message}`, [fieldIssue(["query", name], message, v)]);
  }
  return new Date(ms).toISOString();
}

/**
 * A list of log types (`log_types`, `event_types`, `log_type`): each a catalog type or a
 * legacy name, answered as canonical types; a typo is a 422 rather than a silent empty page.
 */
export function logTypesParam(v: string | readonly string[] | undefined, name = "log_types"): string[] | undefined {
  const types = csv(v);
  const unknown = (types ?? []).filter((t) => resolveLogType(t) === undefined);
  if (unknown.length > 0) {
    const message = `unknown log type ${unknown.join(", ")} in ${name}; GET /v1/log-types lists the catalog and the legacy names it takes`;
    throw new AppError("validation", message, [fieldIssue(["query", name], message, v)]);
  }
  return types && [...new Set(types.flatMap((t) => resolveLogType(t) ?? []))];
}

/** The most log ids one read names (`log_ids`): a view's sources or a change's logs, not a bulk export. */
export const MAX_LOG_IDS = 100;

/**
 * `log_ids` of the log and events reads (REST's query, an MCP tool's arguments): the
 * distinct ids named, at most MAX_LOG_IDS. Counted after removing repeats, so one id
 * named 101 times reads as the one log it names, as 3 times does.
 */
export function logIdsParam(v: string | readonly string[] | undefined, location: string[] = ["query"]): string[] | undefined {
  const ids = csv(v);
  const distinct = ids && [...new Set(ids)];
  if (distinct && distinct.length > MAX_LOG_IDS) {
    const message = `log_ids names ${distinct.length} logs; name at most ${MAX_LOG_IDS} per read, or page through the logs with since, until and cursor`;
    throw new AppError("validation", message, [fieldIssue([...location, "log_ids"], message, v)]);
  }
  return distinct;
}

const INSTANT_FORMS = "an ISO 8601 datetime with an offset, or a date (UTC midnight)";

/** `as_of` and `known_at` of the state reads (docs/api.md, "The state at a past time"). */
export const HorizonQuery = {
  as_of: Type.Optional(Type.String({ description: `The state from the logs whose event time is at or before this instant: ${INSTANT_FORMS}` })),
  known_at: Type.Optional(Type.String({ description: `The state from the logs accepted at or before this instant (not after now): ${INSTANT_FORMS}` })),
};

/** What a read at a horizon says it reflects; absent from a plain read. */
export const HorizonAnswer = {
  as_of: Type.Optional(Nullable(Type.String({ description: "The as_of the answer reflects (UTC), null when not bounded; absent without as_of and known_at" }))),
  known_at: Type.Optional(Nullable(Type.String({ description: "The known_at the answer reflects (UTC), null when not bounded; absent without as_of and known_at" }))),
};

/** The horizon of a state read's query (undefined: the plain cached read); a bad instant is 422 naming it. */
export function horizonParam(q: { as_of?: string; known_at?: string }): Horizon | undefined {
  return horizonOf(instantParam(q.as_of, "as_of"), instantParam(q.known_at, "known_at"), ["query"]);
}

const FieldChangeSchema = Type.Object({
  field: Type.String({ description: "A top-level payload field" }),
  before: Type.Unknown({ description: "Its value in the earlier state (null: absent, or summarized)" }),
  after: Type.Unknown({ description: "Its value in the later state (null: absent, or summarized)" }),
  summary: Nullable(
    Type.Object(
      {
        before_members: Nullable(Type.Integer({ description: "Items of an array, or pairs of an object, before (null: a scalar or absent)" })),
        after_members: Nullable(Type.Integer()),
        added: Type.Integer({ description: "Members after that were not there before (an entry that changed counts as one removed and one added)" }),
        removed: Type.Integer(),
      },
      { description: "Set, and before/after null, when a value is over 4,096 characters of JSON or the answer's values passed 65,536" },
    ),
  ),
});

/**
 * One changed module (readmodels/state-diff.ts ModuleDiff), a named schema: the diff and an
 * ingestion job's preview both answer it, and clients get one type for it.
 */
export const ModuleDiffSchema = Type.Object(
  {
    module_type: Type.String(),
    kind: Type.Union([Type.Literal("stable"), Type.Literal("event")]),
    op: Type.Union([Type.Literal("created"), Type.Literal("updated"), Type.Literal("removed")]),
    updated_at: Type.Object({ before: Nullable(Type.String()), after: Nullable(Type.String()) }, { description: "Event time of the latest log that changed the module, in each state" }),
    fields: Type.Array(FieldChangeSchema),
  },
  { $id: "ModuleDiff" },
);
const ModuleDiffRef = Type.Unsafe<typeof ModuleDiffSchema.static>(Type.Ref("ModuleDiff"));
/** Changed modules, as the diff orders them. */
export const ModuleDiffsSchema = Type.Array(ModuleDiffRef, { description: "Modules whose payload differs, stable first, in catalog order" });

/** GET /v1/state/{pid}/diff: what changed between two states of the patient (readmodels/state-diff.ts). */
export const StateDiffSchema = Type.Object({
  patient_id: Type.String(),
  basis: Type.Union([Type.Literal("event"), Type.Literal("known")], { description: "event: from/to are as_of (event time); known: known_at (acceptance time)" }),
  from: Type.String({ description: "The earlier instant, UTC" }),
  to: Type.String({ description: "The later instant, UTC" }),
  summarized: Type.Integer({ description: "Fields answered as counts (summary) rather than values" }),
  modules: ModuleDiffsSchema,
});

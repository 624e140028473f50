/**
 * The log catalog: one TypeBox schema (published as JSON Schema) and optional
 * cross-field refinement per log type, compiled once at module load because
 * validatePayload runs for every log on the ingest hot path.
 */
import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { LOG_TYPE_ALIASES } from "./aliases.js";
import { MAX_ISSUES, echoIssue, toIssues } from "./errors.js";
import type { CatalogEntry, PayloadIssue } from "./issues.js";
import { GROUP_OF, LIFECYCLE_TRACKED, LOG_TYPES, isLogType, type LogGroup, type LogType } from "./log-types.js";
import { conversationEntries } from "./schemas/conversation.js";
import { engagementEntries } from "./schemas/engagement.js";
import { labClinicalEntries } from "./schemas/lab-clinical.js";
import { medicationEntries } from "./schemas/medication.js";
import { passiveEntries } from "./schemas/passive.js";
import { profileEntries } from "./schemas/profile.js";
import { questionnaireEntries } from "./schemas/questionnaire.js";
import { symptomEntries } from "./schemas/symptom.js";

export type { PayloadIssue } from "./issues.js";
export { LOG_TYPE_ALIASES } from "./aliases.js";
export { LOG_GROUPS, LOG_TYPES, GROUP_OF, LIFECYCLE_TRACKED, isLogType, type LogGroup, type LogType } from "./log-types.js";
export { Source, SourceObject, Extensions } from "./schemas/common.js";
export type { LogPayloads } from "./payloads.js";

export interface LogTypeInfo {
  log_type: LogType;
  group: LogGroup;
  /** Lifecycle-tracked types keep each entity with status and history; the rest are point-in-time. */
  lifecycle_tracked: boolean;
  /** Legacy names accepted for this type. */
  aliases: string[];
  /** The payload's schema; TypeBox schemas are JSON Schema. */
  schema: TSchema;
}

// The `satisfies` clauses in the group files make a missing schema a compile error;
// this record type does the same for a group left out here.
const ENTRIES: Readonly<Record<LogType, CatalogEntry>> = {
  ...symptomEntries,
  ...labClinicalEntries,
  ...engagementEntries,
  ...passiveEntries,
  ...profileEntries,
  ...medicationEntries,
  ...conversationEntries,
  ...questionnaireEntries,
};

interface Compiled {
  check: TypeCheck<TSchema>;
  refine?: (payload: unknown) => PayloadIssue[];
  info: LogTypeInfo;
}

const aliasesOf = (type: LogType) => Object.keys(LOG_TYPE_ALIASES).filter((a) => LOG_TYPE_ALIASES[a] === type);

// A Map, not an object: a name such as "toString" must not find an inherited entry.
const COMPILED = new Map<LogType, Compiled>(
  LOG_TYPES.map((type): [LogType, Compiled] => {
    const { schema, refine } = ENTRIES[type];
    const info: LogTypeInfo = {
      log_type: type,
      group: GROUP_OF[type],
      lifecycle_tracked: LIFECYCLE_TRACKED.has(type),
      aliases: aliasesOf(type),
      schema,
    };
    return [type, { check: TypeCompiler.Compile(schema), refine: refine as ((p: unknown) => PayloadIssue[]) | undefined, info }];
  }),
);

/** The canonical type for a canonical name or a legacy alias; undefined when unknown. */
export function resolveLogType(name: string): LogType | undefined {
  if (isLogType(name)) return name;
  return Object.hasOwn(LOG_TYPE_ALIASES, name) ? LOG_TYPE_ALIASES[name] : undefined;
}

/**
 * Validates a payload against its type: the schema first, then (only when the schema
 * passes, so it can trust the shape) the type's cross-field refinement. Returns [] when
 * valid, else at most 20 issues with paths relative to the payload; a missing field's
 * issue carries the object that lacks it as its value, and a large value is named by size.
 */
export function validatePayload(type: LogType, payload: unknown): PayloadIssue[] {
  const c = COMPILED.get(type);
  if (c === undefined) throw new TypeError(`unknown log type ${type}; resolve names with resolveLogType first`);
  if (!c.check.Check(payload)) return toIssues(c.check.Errors(payload), payload).map((i) => echoIssue(i, payload));
  if (c.refine === undefined) return [];
  const issues = c.refine(payload);
  return (issues.length > MAX_ISSUES ? issues.slice(0, MAX_ISSUES) : issues).map((i) => echoIssue(i, payload));
}

export function logTypeInfo(type: LogType): LogTypeInfo {
  const c = COMPILED.get(type);
  if (c === undefined) throw new TypeError(`unknown log type ${type}`);
  return c.info;
}

/** Every catalog type in catalog order (by group). */
export function listLogTypes(): LogTypeInfo[] {
  return LOG_TYPES.map((t) => logTypeInfo(t));
}

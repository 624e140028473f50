import { z } from "zod";
import { bounded } from "../budget.js";
import { defineTool, jsonResult, type McpContext } from "../context.js";
import { args } from "./args.js";
import { assertModule } from "../../../src/state/state-reader.js";
import { filterEntities, filterSince } from "../../../src/state/module-filter.js";
import type { Horizon } from "../../../readmodels/as-of.js";
import { horizonFields } from "../../../src/state/as-of-read.js";
import { toolHorizon } from "./horizon.js";
import { EventModuleHead } from "../../http/routes/state/answers.js";
import { ModuleRead } from "../../http/routes/state/schemas.js";
import { fromTypeBox, SHORTENED } from "./output.js";

/** What narrows a module: entity names and a time (both optional). */
export interface ModuleFilters {
  entities?: readonly string[];
  since?: string;
}

const HINT = "Ask for the entities left out by name with the entities argument; get_logs with since/until pages through whole histories.";

/**
 * The REST twin's answer (GET /v1/state/{pid}/event-modules/{type}), shared with its
 * resource, at the horizon `h` (the current state without one), narrowed by `filters`.
 */
export async function eventModuleAnswer(ctx: McpContext, patientId: string, moduleType: string, budget?: number, h?: Horizon, filters: ModuleFilters = {}) {
  const reader = ctx.services.stateReader;
  assertModule(moduleType, "event");
  const snap = await ctx.services.horizonReader.orPlain(ctx.principal, patientId, h, () => reader.snapshot(ctx.principal, patientId, [moduleType]));
  const read = reader.eventModule(snap.stored, moduleType);
  let payload: unknown = read.payload;
  let notFound: string[] | undefined;
  if (filters.entities?.length) ({ payload, not_found: notFound } = filterEntities(payload, filters.entities));
  if (filters.since !== undefined) payload = filterSince(payload, filters.since);
  const narrowed = filters.entities?.length || filters.since !== undefined
    ? { filters: { entities: filters.entities ?? null, since: filters.since ?? null }, ...(notFound?.length ? { entities_not_found: notFound } : {}) }
    : {};
  const answer = { patient_id: patientId, ...horizonFields(snap), ...read, payload, ...narrowed };
  return { snap, answer: bounded(answer, HINT, budget) };
}

const schema = {
  module_type: args.moduleType,
  entities: z.array(z.string().min(1).max(200)).max(50).optional().describe(
    "Only these entities (at most 50), matched by name, alias or code, ignoring case, spaces and underscores: symptoms by " +
    "name (shortness of breath), lab tests by LOINC code or name (4548-4, HbA1c), medications by RxNorm code or name, vitals " +
    "by measurement (heart_rate), questionnaires by instrument (PHQ-9). Lists of unnamed entries (daily rollups) stay whole.",
  ),
  since: args.instant("Only history entries at or after this time (event time); entities keep their current status."),
  ...args.horizon,
};

/** The REST twin's answer, and what the entities/since filters add. */
const output = z.looseObject({
  ...fromTypeBox(EventModuleHead).shape,
  ...fromTypeBox(ModuleRead).shape,
  filters: z.looseObject({ entities: z.array(z.string()).nullable(), since: z.string().nullable() }).optional(),
  entities_not_found: z.array(z.string()).optional(),
  ...SHORTENED,
});

export const getEventStateModule = defineTool({
  name: "get_event_state_module",
  title: "One event-state module",
  description: [
    "Returns one event-state module of the patient: symptoms (each tracked symptom with status, current score and",
    "history), lab_results (each test with latest value, abnormal flag and history), vitals (latest per measurement",
    "and history), adherence (recent doses taken or skipped, per-medication counts, adverse events), emotional_state,",
    "sleep, heart, glucose, physical_activity, engagement, clinical_context, questionnaires or conversations.",
    "Use it for the detail behind a view or to answer a question about recent data; list_event_state_modules says",
    "which modules hold data; entities and since narrow the answer to what the question is about.",
    "A known module without data answers its empty payload with null times.",
    "as_of / known_at: the module at a past time (event time / what had been sent in by then).",
    "Answer: JSON {patient_id, module_type, payload, created_at, updated_at} (with as_of, known_at when asked); history",
    "entries carry log_id. An answer over about 20 kB keeps every entity with its newest history entries and says what",
    "it left out.",
  ].join(" "),
  args: schema,
  output,
  async run(ctx, pid, a: z.infer<z.ZodObject<typeof schema>>) {
    const { snap, answer } = await eventModuleAnswer(ctx, pid, a.module_type, undefined, toolHorizon(a), { entities: a.entities, since: a.since });
    return jsonResult(answer, snap);
  },
});

import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { Services } from "../../../services.js";
import { readChanges } from "../../../../src/state/changes-read.js";
import { responses } from "../../schemas.js";
import { instantParam, PatientParams } from "./schemas.js";
import { QueryParams } from "../../query-params.js";

const ItemsSchema = (description: string) => Type.Array(
  Type.Object({
    kind: Type.String({ description: "What kind of change (new, worsened, improved, resolved, returned, new_test, corrected, updated, abnormal, critical, added, removed, changed, skipped_dose, doses_not_reported, out_of_range, significant, encounter, note, plan_item)" }),
    what: Type.String({ description: "The change in one line" }),
    at: Type.String({ description: "Event time of the change" }),
    log_ids: Type.Array(Type.String(), { description: "Ids of the logs it comes from" }),
    before: Type.Optional(Type.Unknown({ description: "The value at the start of the window (or the previous one), where there is one" })),
    after: Type.Optional(Type.Unknown({ description: "The value at its end" })),
  }),
  { description },
);

/** GET /v1/state/{pid}/changes: one domain list per clinical area, each item with its log ids. */
export const ChangesSchema = Type.Object({
  patient_id: Type.String(),
  since: Type.String({ description: "The window's start, UTC (exclusive)" }),
  until: Type.String({ description: "The window's end, UTC (inclusive)" }),
  summary: Type.String({ description: "Which domains hold changes, or that none does" }),
  logs_in_window: Type.Object({ total: Type.Integer(), by_type: Type.Record(Type.String(), Type.Integer()) }, { description: "The logs with an event time in the window" }),
  symptoms: ItemsSchema("new, worsened, improved, resolved, returned (and changed_instrument): the last report in the window against the last before it"),
  labs: ItemsSchema("new_test (a test's first result), corrected (a result that replaces another of its test and collection time with another value or flag; updated when it is not marked corrected, e.g. final after preliminary), abnormal, critical (HH/LL), each with the previous result; a replaced result is not listed"),
  medications: ItemsSchema("added, removed, changed (dose, frequency, route, form, schedule), skipped_dose, doses_not_reported"),
  vitals: ItemsSchema("out_of_range: measurements outside the usual adult range"),
  devices: ItemsSchema("out_of_range: CGM glucose below 70 or above 250 mg/dL, device SpO2 below 90 %"),
  questionnaires: ItemsSchema("significant, worsened or changed beyond the minimally important difference, against the administration before the window"),
  encounters: ItemsSchema("encounter, note, plan_item in the window"),
});

export const ChangesQuery = QueryParams({
  since: Type.String({ description: "The window's start: an ISO 8601 datetime with an offset, or a date (UTC midnight); changes after it" }),
  until: Type.Optional(Type.String({ description: "The window's end, in the same forms; default now" })),
});


/** GET /v1/state/{pid}/changes: what changed between two times, by domain (the MCP twin is get_changes). */
export const stateChangesRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  app.get(
    "/v1/state/:pid/changes",
    {
      config: { scope: "sdk:state-read" as const },
      schema: {
        summary: "What changed after `since` (up to `until`, default now), by clinical domain, each item with its log ids",
        tags: ["state"],
        params: PatientParams,
        querystring: ChangesQuery,
        response: responses({ 200: ChangesSchema }),
      },
    },
    async (req, reply) => {
      const since = instantParam(req.query.since, "since")!;
      const until = instantParam(req.query.until, "until") ?? s.stateReader.now();
      const { answer, applied_seq } = await readChanges(s.horizonReader, req.principal, req.params.pid, since, until, "query");
      reply.header("x-pss-applied-seq", String(applied_seq));
      return answer;
    },
  );
};

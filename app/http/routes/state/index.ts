import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import { Type } from "@sinclair/typebox";
import type { Services } from "../../../services.js";
import { logIdsWhere, readPatientLogs, traceMatches } from "../../../../src/state/log-reader.js";
import { EVENT_STATUS_FILTERS, eventMatcher, EVENTS_CURSOR_PATTERN, eventsCursorAfter, readEventsPage, type EventStatusFilter } from "../../../../src/state/events-page.js";
import { assertModule, eventModuleKey, type Snapshot } from "../../../../src/state/state-reader.js";
import { EVENT_MODULES, STABLE_MODULES, type ModuleKey } from "../../../../readmodels/module.js";
import { responses } from "../../schemas.js";
import { EventModuleHead, EventModuleList, EventsPage, LogsPage, StableAnswer } from "./answers.js";
import { csv, eitherList, HorizonQuery, horizonParam, instantParam, ListParam, LogIdsParam, logIdsParam, logTypesParam, ModuleRead, PatientParams } from "./schemas.js";
import { horizonFields, type HorizonSnapshot } from "../../../../src/state/as-of-read.js";
import { stateMemoryRoutes } from "./memories.js";
import { stateViewRoutes } from "./views.js";
import { stateDiffRoutes } from "./diff.js";
import { stateChangesRoutes } from "./changes.js";
import { stateFhirRoutes } from "./fhir.js";
import { QueryParams } from "../../query-params.js";

/** Tells the client when the wait for its own writes ran out and the state may lag. */
export function markFreshness(reply: FastifyReply, snap: Snapshot): void {
  reply.header("x-pss-applied-seq", String(snap.stored.applied_seq));
  if (!snap.current) reply.header("x-pss-stale", "true");
  // A read at a horizon says which in headers too, for answers without a JSON body (markdown).
  const h = (snap as Partial<HorizonSnapshot>).horizon;
  if (h?.as_of !== undefined) reply.header("x-pss-as-of", h.as_of);
  if (h?.known_at !== undefined) reply.header("x-pss-known-at", h.known_at);
}

/**
 * Answers JSON already serialized (modules cut from their stored text, see
 * moduleReadJson): Fastify sends a string as it is, past the response schema's
 * serializer, which documents the shape still.
 */
export function sendJsonText(reply: FastifyReply, json: string): FastifyReply {
  return reply.type("application/json; charset=utf-8").send(json);
}

/** REST twins of the MCP state tools (contract "State reads"). */
export const stateRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  const config = { scope: "sdk:state-read" as const };
  const tags = ["state"];
  const reader = s.stateReader;

  app.get(
    "/v1/state/:pid/stable",
    {
      config,
      schema: {
        summary: "Stable modules (demographics, medications, conditions, ...); ?modules=a,b filters",
        tags,
        params: PatientParams,
        querystring: QueryParams({ modules: Type.Optional(ListParam("Stable module keys, comma-separated or the key repeated")), ...HorizonQuery }),
        response: responses({ 200: StableAnswer }),
      },
    },
    async (req, reply) => {
      const only = csv(req.query.modules);
      for (const k of only ?? []) assertModule(k, "stable");
      const h = horizonParam(req.query);
      if (h) {
        const at = await s.horizonReader.snapshot(req.principal, req.params.pid, h);
        markFreshness(reply, at);
        return { patient_id: req.params.pid, ...horizonFields(at), modules: reader.stableModules(at.stored, only) };
      }
      const snap = await reader.rawSnapshot(req.principal, req.params.pid, (only as ModuleKey[] | undefined) ?? STABLE_MODULES);
      markFreshness(reply, snap);
      return sendJsonText(reply, `{"patient_id":${JSON.stringify(req.params.pid)},"modules":${reader.stableModulesJson(snap, only)}}`);
    },
  );

  app.get(
    "/v1/state/:pid/event-modules",
    {
      config,
      schema: {
        summary: "Event-state modules that hold data",
        tags,
        params: PatientParams,
        querystring: QueryParams(HorizonQuery),
        response: responses({ 200: EventModuleList }),
      },
    },
    async (req, reply) => {
      const snap = await s.horizonReader.orPlain(req.principal, req.params.pid, horizonParam(req.query), () => reader.snapshot(req.principal, req.params.pid, EVENT_MODULES));
      markFreshness(reply, snap);
      return { patient_id: req.params.pid, ...horizonFields(snap), modules: reader.eventModuleList(snap.stored) };
    },
  );

  app.get(
    "/v1/state/:pid/event-modules/:module_type",
    {
      config,
      schema: {
        summary: "One event-state module (symptoms, lab_results, vitals, adherence, ...; behavioral_state reads emotional_state)",
        tags,
        params: Type.Object({ pid: PatientParams.properties.pid, module_type: Type.String() }),
        querystring: QueryParams(HorizonQuery),
        response: responses({ 200: Type.Intersect([EventModuleHead, ModuleRead]) }),
      },
    },
    async (req, reply) => {
      const type = eventModuleKey(req.params.module_type);
      assertModule(type, "event");
      const h = horizonParam(req.query);
      if (h) {
        const at = await s.horizonReader.snapshot(req.principal, req.params.pid, h);
        markFreshness(reply, at);
        return { patient_id: req.params.pid, ...horizonFields(at), ...reader.eventModule(at.stored, type) };
      }
      const snap = await reader.rawSnapshot(req.principal, req.params.pid, [type]);
      markFreshness(reply, snap);
      return sendJsonText(reply, `{"patient_id":${JSON.stringify(req.params.pid)},${reader.eventModuleJson(snap, type).slice(1)}`);
    },
  );

  app.get(
    "/v1/state/:pid/logs",
    {
      config,
      schema: {
        summary: "The patient's logs, newest first by default, filtered by time, type and trace, with a cursor",
        tags,
        params: PatientParams,
        querystring: QueryParams({
          since: Type.Optional(Type.String({ description: "ISO 8601 datetime with offset, or a date (UTC midnight)" })),
          until: Type.Optional(Type.String({ description: "ISO 8601 datetime with offset, or a date (UTC midnight)" })),
          log_types: Type.Optional(ListParam("Log types (or legacy names), comma-separated or the key repeated")),
          event_types: Type.Optional(ListParam("Same as log_types (the hosted product's name for it); both given: logs of either list")),
          trace: Type.Optional(Type.String({ description: 'The whole trace: a string trace as sent, an object trace as "object_type:object_id"' })),
          trace_type: Type.Optional(Type.String({ description: "Only logs whose trace has this object_type (a string trace has none)" })),
          trace_id: Type.Optional(Type.String({ description: "Only logs whose trace has this object_id (a string trace is all id)" })),
          log_ids: Type.Optional(LogIdsParam("Only these logs (ids as a view's sources or a change's log_ids give them), comma-separated or the key repeated; at most 100 distinct ids")),
          limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
          cursor: Type.Optional(Type.String()),
          order: Type.Union([Type.Literal("desc"), Type.Literal("asc")], { default: "desc" }),
          include_metadata: Type.Boolean({ default: false, description: "Each log with its metadata (left out by default: it can be large, such as a FHIR resource)" }),
        }),
        response: responses({ 200: LogsPage }),
      },
    },
    async (req) => {
      await reader.authorize(req.principal, req.params.pid);
      const q = req.query;
      const r = await readPatientLogs(
        { js: s.topology.js, jsm: s.topology.jsm, names: s.topology.names },
        req.principal,
        req.params.pid,
        {
          since: instantParam(q.since, "since"),
          until: instantParam(q.until, "until"),
          log_types: eitherList(logTypesParam(q.log_types), logTypesParam(q.event_types, "event_types")),
          trace: q.trace,
          trace_type: q.trace_type,
          trace_id: q.trace_id,
          log_ids: logIdsParam(q.log_ids),
          limit: q.limit,
          cursor: q.cursor,
          order: q.order,
          include_metadata: q.include_metadata,
        },
      );
      return { patient_id: req.params.pid, count: r.logs.length, logs: r.logs, next_cursor: r.next_cursor };
    },
  );

  app.get(
    "/v1/state/:pid/events",
    {
      config,
      schema: {
        summary: "Audit of what each applied log changed (oldest first), with a cursor",
        tags,
        params: PatientParams,
        querystring: QueryParams({
          since: Type.Optional(Type.String({ description: "ISO 8601 datetime with offset, or a date (UTC midnight)" })),
          until: Type.Optional(Type.String({ description: "ISO 8601 datetime with offset, or a date (UTC midnight)" })),
          limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
          cursor: Type.Optional(Type.String({ pattern: EVENTS_CURSOR_PATTERN, maxLength: 500, description: "next_cursor of the previous page" })),
          log_type: Type.Optional(ListParam("Only events of these log types (or legacy names), comma-separated or the key repeated")),
          trace_type: Type.Optional(Type.String({ description: "Only events of logs whose trace has this object_type (as on /logs)" })),
          trace_id: Type.Optional(Type.String({ description: "Only events of logs whose trace has this object_id (as on /logs)" })),
          log_ids: Type.Optional(LogIdsParam("Only events of these logs, comma-separated or the key repeated; at most 100 distinct ids (as on /logs)")),
          status: Type.Optional(
            Type.Union(
              (Object.keys(EVENT_STATUS_FILTERS) as EventStatusFilter[]).map((k) => Type.Literal(k)),
              { description: "complete: every event (applied or no_change); applied, no_change: those; pending, failed: none, as a log is applied once stored (docs/api.md)" },
            ),
          ),
        }),
        response: responses({ 200: EventsPage }),
      },
    },
    async (req, reply) => {
      const { log_type, trace_type, trace_id, log_ids, status, ...rest } = req.query;
      const types = logTypesParam(log_type, "log_type");
      const q = { ...rest, since: instantParam(rest.since, "since"), until: instantParam(rest.until, "until") };
      // The audit is written with the state; waiting on the state (no modules) is enough.
      const snap = await reader.snapshot(req.principal, req.params.pid, []);
      markFreshness(reply, snap);
      if (status !== undefined && EVENT_STATUS_FILTERS[status].length === 0) return { patient_id: req.params.pid, count: 0, events: [], next_cursor: null };
      // The audit does not keep traces: the patient's log says which logs carry the one asked for.
      const named = logIdsParam(log_ids);
      const traced = trace_type === undefined && trace_id === undefined
        ? named && new Set(named)
        : await logIdsWhere(s.topology, req.principal, req.params.pid, (l) => traceMatches(l, { trace_type, trace_id }) && (named === undefined || named.includes(l.id)));
      const match = eventMatcher({ log_types: types, status, log_ids: traced });
      const page = await readEventsPage(s.stateStore, req.params.pid, { ...q, match }, ["query", "cursor"]);
      const last = page.rows.at(-1);
      const next_cursor = page.more && last ? eventsCursorAfter(last) : null;
      return { patient_id: req.params.pid, count: page.rows.length, events: page.rows.map((r) => r.event), next_cursor };
    },
  );

  await app.register(stateViewRoutes, { services: s });
  await app.register(stateMemoryRoutes, { services: s });
  await app.register(stateDiffRoutes, { services: s });
  await app.register(stateChangesRoutes, { services: s });
  await app.register(stateFhirRoutes, { services: s });
};

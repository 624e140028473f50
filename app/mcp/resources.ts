import { ResourceTemplate, type McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ReadResourceResult, RequestId, Resource } from "@modelcontextprotocol/sdk/types.js";
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import { EVENT_MODULES } from "../../readmodels/module.js";
import { VIEW_TYPES, viewTitle } from "../../readmodels/views/index.js";
import { listLogTypes } from "../../catalog/index.js";
import type { Snapshot } from "../../src/state/state-reader.js";
import { MAX_RESOURCE_BYTES, toJson } from "./budget.js";
import { RESOURCE_NOT_FOUND } from "./call-outcomes.js";
import { describeFailure, failedAs, ProtocolError, type McpContext } from "./context.js";
import { eventModuleAnswer } from "./tools/get-event-state-module.js";
import { stableAnswer } from "./tools/get-stable-data.js";
import { rawViewAnswer, readView } from "./tools/get-view.js";

const JSON_TYPE = "application/json";

const json = (uri: URL, value: unknown): ReadResourceResult => ({ contents: [{ uri: uri.href, mimeType: JSON_TYPE, text: toJson(value) }] });
const one = (v: string | string[] | undefined): string => (Array.isArray(v) ? (v[0] ?? "") : (v ?? ""));
/** Parsed once: servers (and so their templates) are built per request. */
const TEMPLATES = {
  stable: new UriTemplate("patient://{patient_id}/stable"),
  eventModule: new UriTemplate("patient://{patient_id}/event-modules/{module_type}"),
  view: new UriTemplate("patient://{patient_id}/views/{view_type}"),
};
const prefixed = (all: readonly string[]) => (value: string) => all.filter((x) => x.startsWith(value));

/** Reads through the same checks as the tools; a patient or module that is not there is "resource not found". */
function guarded(ctx: McpContext, callId: RequestId, read: () => Promise<ReadResourceResult>): Promise<ReadResourceResult> {
  return failedAs(ctx, callId, read, (err) => {
    throw new ProtocolError(RESOURCE_NOT_FOUND, describeFailure(err, ctx.principal), { cause: err });
  });
}

/**
 * Patient state as URI-addressable JSON snapshots (the same answers as the tools), and
 * organization context for credentials that are not bound to a patient. With a patient
 * token, resources/list names that patient's resources; other credentials reach every
 * patient of their project, too many to list, so they get the templates and the
 * organization resources.
 */
export function registerResources(server: McpServer, ctx: McpContext): void {
  const bound = ctx.principal.patient_id;
  // resources/list calls each template's list; one snapshot serves them all.
  let snap: Promise<Snapshot | null> | undefined;
  const boundSnapshot = (pid: string) => (snap ??= ctx.services.stateReader.snapshot(ctx.principal, pid).catch(() => null));
  const lister = (make: (pid: string, s: Snapshot) => Resource[]) =>
    bound === undefined ? undefined : async () => {
      const s = await boundSnapshot(bound);
      return { resources: s ? make(bound, s) : [] };
    };
  const patientIds = () => (bound === undefined ? [] : [bound]);

  server.registerResource(
    "patient_stable",
    new ResourceTemplate(TEMPLATES.stable, {
      list: lister((pid) => [{ uri: `patient://${pid}/stable`, name: `Stable facts of ${pid}`, mimeType: JSON_TYPE }]),
      complete: { patient_id: patientIds },
    }),
    { title: "Stable patient facts", description: "The patient's stable modules (demographics, conditions, medications, allergies, ...), as get_stable_data answers.", mimeType: JSON_TYPE },
    (uri, v, extra) => guarded(ctx, extra.requestId, async () => json(uri, (await stableAnswer(ctx, one(v.patient_id), undefined, MAX_RESOURCE_BYTES)).answer)),
  );

  server.registerResource(
    "patient_event_module",
    new ResourceTemplate(TEMPLATES.eventModule, {
      list: lister((pid, s) => ctx.services.stateReader.eventModuleList(s.stored).map((m) => ({
        uri: `patient://${pid}/event-modules/${m.module_type}`, name: `${m.module_type} of ${pid}`, mimeType: JSON_TYPE,
      }))),
      complete: { patient_id: patientIds, module_type: prefixed(EVENT_MODULES) },
    }),
    { title: "Event-state module", description: `One event-state module (${EVENT_MODULES.join(", ")}), as get_event_state_module answers.`, mimeType: JSON_TYPE },
    (uri, v, extra) => guarded(ctx, extra.requestId, async () => json(uri, (await eventModuleAnswer(ctx, one(v.patient_id), one(v.module_type), MAX_RESOURCE_BYTES)).answer)),
  );

  server.registerResource(
    "patient_view",
    new ResourceTemplate(TEMPLATES.view, {
      list: lister((pid) => VIEW_TYPES.map((t) => ({ uri: `patient://${pid}/views/${t}`, name: `${viewTitle(t)} of ${pid}`, mimeType: JSON_TYPE }))),
      complete: { patient_id: patientIds, view_type: prefixed(VIEW_TYPES) },
    }),
    { title: "View", description: `A view as raw JSON blocks with refs (${VIEW_TYPES.join(", ")}), as get_view format raw answers.`, mimeType: JSON_TYPE },
    (uri, v, extra) => guarded(ctx, extra.requestId, async () => {
      const pid = one(v.patient_id);
      const { view } = await readView(ctx, pid, one(v.view_type));
      return json(uri, rawViewAnswer(pid, view, MAX_RESOURCE_BYTES));
    }),
  );

  if (bound !== undefined) return;

  server.registerResource(
    "current_project",
    "org://projects/current",
    { title: "Current project", description: "The project this credential reads: id, name, slug, status.", mimeType: JSON_TYPE },
    async (uri, extra) => guarded(ctx, extra.requestId, async () => {
      const p = await ctx.services.projects.get(ctx.principal.project_id);
      if (!p) throw new ProtocolError(RESOURCE_NOT_FOUND, "the project of this credential no longer exists");
      return json(uri, { id: p.id, name: p.name, slug: p.slug, status: p.status, is_default: p.is_default, organization_id: p.organization_id, created_at: p.created_at });
    }),
  );

  server.registerResource(
    "log_types",
    "org://log-types",
    {
      title: "Log type catalog",
      description: "Every log type the service accepts: group, lifecycle tracking, legacy aliases, payload fields and required fields (full JSON Schemas: GET /v1/log-types).",
      mimeType: JSON_TYPE,
    },
    async (uri) => json(uri, { log_types: LOG_TYPE_SUMMARY }),
  );
}

/** The catalog without its schemas (about 15 kB instead of several hundred): field names say enough to pick a type. */
const LOG_TYPE_SUMMARY = listLogTypes().map((t) => {
  const schema = t.schema as { properties?: Record<string, unknown>; required?: string[] };
  return {
    log_type: t.log_type,
    group: t.group,
    lifecycle_tracked: t.lifecycle_tracked,
    aliases: t.aliases,
    fields: Object.keys(schema.properties ?? {}),
    required: schema.required ?? [],
  };
});

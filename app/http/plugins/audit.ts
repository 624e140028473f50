import fp from "fastify-plugin";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { callOutcomes, patientsRead } from "../../mcp/call-outcomes.js";
import type { Principal } from "../../../src/auth/scopes.js";
import type { AuditEntry } from "../../../src/audit/audit-log.js";
import { errorBody } from "../../../src/errors.js";
import type { Services } from "../../services.js";

declare module "fastify" {
  interface FastifyRequest {
    /**
     * Patients a route found while answering, that its request does not name: a FHIR
     * Bundle's (resolved by reference), the patients a list or a query answered with.
     */
    auditPatients?: string[];
    /** Patients whose data the answer carried beyond `auditPatients` (a query's groups past their list). */
    auditPatientsOmitted?: number;
  }
}

/** MCP methods that read patient data; protocol chatter (initialize, the tools and prompts lists) is not audited. */
const MCP_AUDITED = new Set(["tools/call", "resources/read", "resources/list", "prompts/get"]);

/** Routes whose answer names the patients they created (the request cannot). */
const CREATES_PATIENTS = new Set(["POST /v1/patients", "POST /v1/patients/batch"]);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** Patient ids a request names: path, patient token, body (mint, log batch, cohort query). */
function requestPatients(req: FastifyRequest, p: Principal): string[] {
  const out: string[] = [];
  const params = isObject(req.params) ? req.params : {};
  const url = req.routeOptions.url ?? "";
  const fromPath = str(params.pid) ?? str(params.patient_id) ?? (url.startsWith("/v1/patients/:id") ? str(params.id) : undefined);
  if (fromPath) out.push(fromPath);
  if (p.patient_id !== undefined) out.push(p.patient_id);
  const body = req.body;
  if (isObject(body)) {
    const one = str(body.patient_id);
    if (one) out.push(one);
    if (Array.isArray(body.patient_ids)) for (const id of body.patient_ids) if (str(id)) out.push(id as string);
    if (Array.isArray(body.logs)) for (const l of body.logs) if (isObject(l) && str(l.patient_id)) out.push(l.patient_id as string);
  }
  return out;
}

/**
 * The MCP calls of one POST /mcp body (one JSON-RPC message or a batch), with the patients
 * each names: its patient_id or resource, else the cohort of a query (patient_ids, as the
 * REST query records it), else a patient token's own patient.
 */
function mcpCalls(body: unknown, p: Principal): { id: unknown; tool: string; patients: string[] }[] {
  const messages = Array.isArray(body) ? body : [body];
  const out: { id: unknown; tool: string; patients: string[] }[] = [];
  for (const m of messages) {
    if (!isObject(m) || typeof m.method !== "string" || !MCP_AUDITED.has(m.method)) continue;
    const params = isObject(m.params) ? m.params : {};
    const args = isObject(params.arguments) ? params.arguments : {};
    const uri = str(params.uri);
    const fromUri = uri ? /^patient:\/\/([^/]+)/.exec(uri)?.[1] : undefined;
    const name = str(params.name) ?? uri;
    const one = str(args.patient_id) ?? fromUri;
    const cohort = Array.isArray(args.patient_ids) ? args.patient_ids.filter((id): id is string => str(id) !== undefined) : [];
    const patients = one !== undefined ? [one] : cohort.length > 0 ? cohort : p.patient_id !== undefined ? [p.patient_id] : [];
    out.push({ id: m.id, tool: name ? `${m.method} ${name}` : m.method, patients });
  }
  return out;
}

/** One entry; the audit log bounds every field (src/audit/encode-entry.ts). */
function entry(req: FastifyRequest, status: number, p: Principal, patients: string[], tool: string | null, omitted = 0): AuditEntry {
  const unique = [...new Set(patients)];
  return {
    at: new Date().toISOString(),
    organization_id: p.organization_id,
    project_id: p.project_id,
    key_id: p.key_id,
    credential: p.kind,
    method: req.method,
    route: req.routeOptions.url ?? req.url.split("?")[0]!,
    tool,
    patient_id: unique.length === 1 ? unique[0]! : null,
    patient_ids: unique,
    ...(omitted > 0 ? { patient_ids_omitted: omitted } : {}),
    status,
    request_id: String(req.id),
  };
}

/** Ids of the patients a create answered with (POST /v1/patients and its batch). */
function createdPatients(payload: unknown): string[] {
  if (typeof payload !== "string") return [];
  try {
    const body = JSON.parse(payload) as { id?: unknown; items?: { id?: unknown }[] };
    return [body.id, ...(Array.isArray(body.items) ? body.items.map((i) => i?.id) : [])].filter((x): x is string => typeof x === "string");
  } catch {
    return [];
  }
}

/**
 * The entries of one answer. An MCP POST that was answered (2xx) has one per audited
 * call, each with what it came to (a call refused inside a 200 is audited as REST would
 * answer it); any other answer, an MCP POST refused as a whole included, has one.
 */
function entriesOf(req: FastifyRequest, reply: FastifyReply, p: Principal, payload: unknown): AuditEntry[] {
  const status = reply.statusCode;
  const route = `${req.method} ${req.routeOptions.url}`;
  if (route === "POST /mcp") {
    const calls = mcpCalls(req.body, p);
    if (status < 300) {
      const outcomes = callOutcomes(req);
      const read = patientsRead(req);
      return calls.map((c) => {
        const found = read?.get(c.id as RequestId);
        return entry(req, outcomes?.get(c.id as RequestId) ?? status, p, [...c.patients, ...(found?.ids ?? [])], c.tool, found?.omitted);
      });
    }
    return [entry(req, status, p, calls.flatMap((c) => c.patients), null)];
  }
  const created = status < 300 && CREATES_PATIENTS.has(route) ? createdPatients(payload) : [];
  return [entry(req, status, p, [...requestPatients(req, p), ...created, ...(req.auditPatients ?? [])], null, req.auditPatientsOmitted)];
}

const UNSTORED =
  "the audit trail could not record this request, so it is not answered; retry shortly (a write that got this answer may have been applied: retry it with the same idempotency keys)";

/**
 * Records every authenticated request to a scoped route (every patient-data read, every
 * MCP call, every write, every refusal after authentication) in the audit stream, and
 * sends the answer only once JetStream stored its entries: no answer leaves the service
 * unaudited. When the entry cannot be stored (NATS down or past the publish time-out),
 * the answer is replaced by a 503 with the spec's body. This adds one JetStream publish
 * round trip to each audited request (bench/audit-append.ts measures it).
 */
export const auditPlugin = fp(
  async (app: FastifyInstance, opts: { services: Services }) => {
    app.addHook("onSend", async (req, reply, payload) => {
      const scope = req.routeOptions.config?.scope;
      const p = req.principal as Principal | null;
      if (!p || scope === false || scope === undefined || req.routeOptions.url === undefined) return payload;
      const entries = entriesOf(req, reply, p, payload);
      try {
        await Promise.all(entries.map((e) => opts.services.audit.append(e)));
        return payload;
      } catch (err) {
        req.log.error({ err, route: req.routeOptions.url }, "audit entry could not be stored: the request is answered 503");
        void reply.code(503).header("content-type", "application/json; charset=utf-8");
        reply.removeHeader("content-length");
        return JSON.stringify(errorBody(503, "server_error", UNSTORED, [{ type: "audit_unavailable", message: "the audit entry of this request was not stored" }]));
      }
    });
  },
  { name: "audit", dependencies: ["auth"] },
);

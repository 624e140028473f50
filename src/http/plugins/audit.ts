import fp from "fastify-plugin";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { callOutcomes } from "../../mcp/call-outcomes.js";
import type { Principal } from "../../auth/scopes.js";
import type { AuditEntry } from "../../audit/audit-log.js";
import type { Services } from "../../services.js";

/** Most patient ids one entry lists (a batch of 5,000 logs names at most 5,000). */
const MAX_PATIENT_IDS = 10_000;

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

/** The MCP calls of one POST /mcp body (one JSON-RPC message or a batch), with the patient each names. */
function mcpCalls(body: unknown, p: Principal): { id: unknown; tool: string; patient: string | undefined }[] {
  const messages = Array.isArray(body) ? body : [body];
  const out: { id: unknown; tool: string; patient: string | undefined }[] = [];
  for (const m of messages) {
    if (!isObject(m) || typeof m.method !== "string" || !MCP_AUDITED.has(m.method)) continue;
    const params = isObject(m.params) ? m.params : {};
    const args = isObject(params.arguments) ? params.arguments : {};
    const uri = str(params.uri);
    const fromUri = uri ? /^patient:\/\/([^/]+)/.exec(uri)?.[1] : undefined;
    const name = str(params.name) ?? uri;
    out.push({ id: m.id, tool: name ? `${m.method} ${name}` : m.method, patient: str(args.patient_id) ?? fromUri ?? p.patient_id });
  }
  return out;
}

function entry(req: FastifyRequest, status: number, p: Principal, patients: string[], tool: string | null): AuditEntry {
  const unique = [...new Set(patients)].slice(0, MAX_PATIENT_IDS);
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
    status,
    request_id: String(req.id),
  };
}

/**
 * Records every authenticated request to a scoped route (every patient-data read, every
 * write, every refusal after authentication) in the audit stream. The hook runs once the
 * answer is sent and does not wait for JetStream: auditing adds no latency, and a failed
 * append is logged as an error for operators rather than failing a request already answered.
 */
export const auditPlugin = fp(
  async (app: FastifyInstance, opts: { services: Services }) => {
    const created = new WeakMap<FastifyRequest, string[]>();

    app.addHook("onSend", async (req, reply, payload) => {
      if (reply.statusCode >= 300 || typeof payload !== "string" || !CREATES_PATIENTS.has(`${req.method} ${req.routeOptions.url}`)) return payload;
      try {
        const body = JSON.parse(payload) as { id?: unknown; items?: { id?: unknown }[] };
        const ids = [body.id, ...(Array.isArray(body.items) ? body.items.map((i) => i?.id) : [])].filter((x): x is string => typeof x === "string");
        created.set(req, ids);
      } catch {
        // Not JSON: nothing to learn from it.
      }
      return payload;
    });

    app.addHook("onResponse", async (req, reply) => {
      const scope = req.routeOptions.config?.scope;
      const p = req.principal as Principal | null;
      if (!p || scope === false || scope === undefined || req.routeOptions.url === undefined) return;
      // An MCP call refused inside a 200 (another patient, bad arguments) is audited as what
      // it came to, as REST would answer it.
      const outcomes = callOutcomes(req);
      const entries =
        req.routeOptions.url === "/mcp" && req.method === "POST"
          ? mcpCalls(req.body, p).map((c) => entry(req, outcomes?.get(c.id as RequestId) ?? reply.statusCode, p, c.patient ? [c.patient] : [], c.tool))
          : [entry(req, reply.statusCode, p, [...requestPatients(req, p), ...(created.get(req) ?? [])], null)];
      for (const e of entries) {
        opts.services.audit.append(e).catch((err: unknown) => req.log.error({ err, route: e.route }, "audit entry could not be stored"));
      }
    });
  },
  { name: "audit", dependencies: ["auth"] },
);

import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { AppError, fieldIssue, notFound } from "../../../errors.js";
import { assertPatientFields, canonicalTimeZone, identifierKey, newPatient, publicPatient, uniqueIdentifiers } from "../../../control/patient-records.js";
import type { ExternalIdentifier, Patient } from "../../../control/patients.js";
import type { Services } from "../../../services.js";
import { responses } from "../../schemas.js";
import { IdentifiersBody, PatientCreateSchema, PatientIdParams, PatientSchema, PatientUpdateSchema } from "./schemas.js";
import { patientMaintenanceRoutes } from "./maintenance.js";

const checkPatientCreate = TypeCompiler.Compile(PatientCreateSchema);

/** Whether a read-only field came back as read: identifiers as a set of (system, value), the rest as JSON. */
function sameValue(field: string, sent: unknown, stored: unknown): boolean {
  if (field !== "external_identifiers") return JSON.stringify(sent) === JSON.stringify(stored);
  // The schema gives PUT no identifiers: what was sent is checked for shape here.
  const key = (e: unknown) => (e !== null && typeof e === "object" ? identifierKey(e as ExternalIdentifier) : "?");
  if (!Array.isArray(sent) || !Array.isArray(stored)) return false;
  const a = new Set(sent.map(key));
  const b = new Set(stored.map(key));
  return a.size === b.size && [...a].every((k) => b.has(k));
}

/** What PUT changes; the rest of a patient is read-only there. */
const UPDATABLE_FIELDS = Object.keys(PatientUpdateSchema.properties);
const READ_ONLY_FIELDS = [
  ["id", "a patient keeps its id"],
  ["status", "DELETE /v1/patients/{id} deletes a patient"],
  ["created_at", "it is set when the patient is created"],
  ["external_identifiers", "use POST or DELETE /v1/patients/{id}/external-identifiers"],
] as const;

const PatientRef = Type.Unsafe<typeof PatientSchema.static>(Type.Ref("Patient"));

export const patientRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  const config = { scope: "api:manage-patients" as const };
  const tags = ["patients"];

  /** The patient of the caller's project, or 404 (also for another project's patient). */
  async function load(project: string, id: string, onlyPatient?: string): Promise<Patient> {
    const p = onlyPatient !== undefined && onlyPatient !== id ? null : await s.patients.getActive(project, id);
    if (!p) throw notFound("patient", id);
    return p;
  }

  app.post(
    "/v1/patients",
    { config, schema: { summary: "Create a patient", tags, body: PatientCreateSchema, response: responses({ 201: PatientRef }) } },
    async (req, reply) => {
      assertPatientFields(req.body, ["body"]);
      const p = newPatient(req.body, req.principal, new Date().toISOString());
      await s.patients.create(p);
      return reply.status(201).send(publicPatient(p));
    },
  );

  app.get(
    "/v1/patients",
    {
      config,
      schema: {
        summary: "List patients, or find one by external identifier (system and value)",
        tags,
        querystring: Type.Object({
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 50 }),
          offset: Type.Integer({ minimum: 0, default: 0 }),
          system: Type.Optional(Type.String({ minLength: 1 })),
          value: Type.Optional(Type.String({ minLength: 1 })),
          // The names the hosted product's SDKs send: a filter they set must never be dropped
          // (every patient would come back, and the first taken for the one asked for).
          external_system: Type.Optional(Type.String({ minLength: 1, description: "Alias of system" })),
          external_value: Type.Optional(Type.String({ minLength: 1, description: "Alias of value" })),
        }),
        response: responses({ 200: Type.Object({ patients: Type.Array(PatientRef), total: Type.Integer(), has_more: Type.Boolean() }) }),
      },
    },
    async (req) => {
      const { limit, offset } = req.query;
      const system = req.query.system ?? req.query.external_system;
      const value = req.query.value ?? req.query.external_value;
      const project = req.principal.project_id;
      let all: Patient[];
      if (value !== undefined) {
        const systems = system !== undefined ? [system] : undefined;
        const found = systems ? await s.patients.findByExternalId(project, { system: systems[0]!, value }) : null;
        all = found ? [found] : systems ? [] : await scanByValue(project, value);
      } else {
        const ids = (await s.patients.list(project)).sort();
        all = (await Promise.all(ids.map((id) => s.patients.getActive(project, id)))).filter((p): p is Patient => p !== null);
        if (system !== undefined) all = all.filter((p) => p.external_identifiers.some((e) => e.system === system));
      }
      const page = all.slice(offset, offset + limit);
      return { patients: page.map(publicPatient), total: all.length, has_more: offset + page.length < all.length };
    },
  );

  async function scanByValue(project: string, value: string): Promise<Patient[]> {
    const ids = (await s.patients.list(project)).sort();
    const ps = await Promise.all(ids.map((id) => s.patients.getActive(project, id)));
    return ps.filter((p): p is Patient => p !== null && p.external_identifiers.some((e) => e.value === value));
  }

  app.post(
    "/v1/patients/batch",
    {
      config,
      schema: {
        summary: "Create many patients; each succeeds or fails on its own",
        tags,
        body: Type.Object({ patients: Type.Array(Type.Unknown(), { minItems: 1, maxItems: 1000 }) }),
        response: responses({
          200: Type.Object({
            count: Type.Integer(),
            items: Type.Array(Type.Object({ index: Type.Integer(), id: Type.String() })),
            errors: Type.Array(Type.Object({ index: Type.Integer(), code: Type.String(), message: Type.String() })),
          }),
        }),
      },
    },
    async (req) => {
      const items: { index: number; id: string }[] = [];
      const errors: { index: number; code: string; message: string }[] = [];
      const now = new Date().toISOString();
      await Promise.all(
        req.body.patients.map(async (raw, index) => {
          try {
            const input = parsePatientInput(raw, index);
            const p = newPatient(input, req.principal, now);
            await s.patients.create(p);
            items.push({ index, id: p.id });
          } catch (err) {
            if (!(err instanceof AppError)) throw err;
            errors.push({ index, code: err.code === "conflict" ? "conflict" : "validation_error", message: err.message });
          }
        }),
      );
      items.sort((a, b) => a.index - b.index);
      errors.sort((a, b) => a.index - b.index);
      return { count: items.length, items, errors };
    },
  );

  app.get(
    "/v1/patients/:id",
    { config, schema: { summary: "Get a patient", tags, params: PatientIdParams, response: responses({ 200: PatientRef }) } },
    async (req) => publicPatient(await load(req.principal.project_id, req.params.id, req.principal.patient_id)),
  );

  app.put(
    "/v1/patients/:id",
    {
      config,
      schema: { summary: "Update a patient (partial: only the fields sent change)", tags, params: PatientIdParams, body: PatientUpdateSchema, response: responses({ 200: PatientRef }) },
    },
    async (req) => {
      const project = req.principal.project_id;
      const current = publicPatient(await load(project, req.params.id, req.principal.patient_id));
      const body = req.body as Record<string, unknown>;
      // A client may send back what it read (GET, change, PUT): read-only fields pass when
      // unchanged and are refused when not, rather than silently kept or, worse, stored.
      for (const [field, how] of READ_ONLY_FIELDS) {
        if (body[field] !== undefined && !sameValue(field, body[field], current[field])) {
          const message = `${field} cannot be changed here: ${how}`;
          throw new AppError("validation", message, [fieldIssue(["body", field], message, body[field])]);
        }
      }
      assertPatientFields(req.body, ["body"]);
      // Only the patient's own fields: anything else in the body is ignored, as on create.
      const changes: Record<string, unknown> = {};
      for (const f of UPDATABLE_FIELDS) if (body[f] !== undefined) changes[f] = body[f];
      if (typeof changes.timezone === "string") changes.timezone = canonicalTimeZone(changes.timezone);
      const now = new Date().toISOString();
      const updated = await s.patients.modify(project, req.params.id, (p) => (p.status === "active" ? { ...p, ...changes, updated_at: now } : undefined));
      if (!updated || updated.status !== "active") throw notFound("patient", req.params.id);
      // Days (device rollups, adherence) and views follow the patient's zone, and views its
      // date of birth: compile the state again. A read before that finishes waits for it (StateReader).
      if (updated.timezone !== current.timezone || updated.date_of_birth !== current.date_of_birth) {
        await s.stateReader.recompile({ organization_id: req.principal.organization_id, project_id: project, patient_id: updated.id });
      }
      return publicPatient(updated);
    },
  );

  app.register(patientMaintenanceRoutes, { services: s, load });

  function parsePatientInput(raw: unknown, index: number) {
    if (!checkPatientCreate.Check(raw)) {
      const first = checkPatientCreate.Errors(raw).First();
      const where = first ? `${first.path || "patient"}: ${first.message}` : "invalid patient";
      throw new AppError("validation", `patients[${index}] ${where}`);
    }
    const input = raw as typeof PatientCreateSchema.static;
    assertPatientFields(input, ["body", "patients", index]);
    return { ...input, external_identifiers: uniqueIdentifiers(input.external_identifiers ?? []) };
  }
};

import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type, type Static } from "@sinclair/typebox";
import { AppError, fieldIssue, notFound } from "../../../../src/errors.js";
import { assertPatientFields, canonicalTimeZone, matchesIdentifier, newPatient, publicPatient, uniqueIdentifiers } from "../../../../src/control/patient-records.js";
import type { Patient } from "../../../../src/control/patients.js";
import type { Services } from "../../../services.js";
import { responses } from "../../schemas.js";
import { backendUnavailable } from "../../backend-unavailable.js";
import { PatientCreateSchema, PatientIdParams, PatientSchema, PatientUpdateSchema, UPDATABLE_FIELDS, patientSchemaProblem } from "../../../../src/control/patient-schemas.js";
import { patientMaintenanceRoutes } from "./maintenance.js";
import { QueryParams } from "../../query-params.js";


/** What PUT does not change: a client may send back what it read, so these pass when unchanged. */
const READ_ONLY_FIELDS = [
  ["id", "a patient keeps its id"],
  ["status", "DELETE /v1/patients/{id} deletes a patient"],
  ["created_at", "it is set when the patient is created"],
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
        summary: "List patients, or those with an external identifier matching every filter given (system, value, integration_id), or a name containing `name`",
        tags,
        querystring: QueryParams({
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 50 }),
          offset: Type.Integer({ minimum: 0, default: 0 }),
          system: Type.Optional(Type.String({ minLength: 1, description: "Patients with an identifier of this system" })),
          value: Type.Optional(Type.String({ minLength: 1, description: "Patients with an identifier of this value (with system: the one holding that pair)" })),
          // The names the hosted product's SDKs send: a filter they set must never be dropped
          // (every patient would come back, and the first taken for the one asked for).
          external_system: Type.Optional(Type.String({ minLength: 1, description: "Alias of system" })),
          external_value: Type.Optional(Type.String({ minLength: 1, description: "Alias of value" })),
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "Patients whose first and last name, together, contain this text (any case)" })),
          integration_id: Type.Optional(Type.String({ minLength: 1, description: "Patients with an identifier linked to this integration" })),
        }),
        response: responses({ 200: Type.Object({ patients: Type.Array(PatientRef), total: Type.Integer(), has_more: Type.Boolean() }) }),
      },
    },
    async (req) => {
      const { limit, offset, integration_id } = req.query;
      const system = req.query.system ?? req.query.external_system;
      const value = req.query.value ?? req.query.external_value;
      const project = req.principal.project_id;
      // The filters hold together, on one identifier: system and integration_id, say, find
      // the patients with an identifier of that system linked to that integration.
      const filters = { system, value, integration_id };
      const filtered = system !== undefined || value !== undefined || integration_id !== undefined;
      let all: Patient[];
      if (system !== undefined && value !== undefined) {
        // The pair has at most one holder: the identifier index finds it without a scan.
        const found = await s.patients.findByExternalId(project, { system, value });
        all = found && found.external_identifiers.some((e) => matchesIdentifier(filters, e)) ? [found] : [];
      } else {
        const ids = (await s.patients.list(project)).sort();
        all = (await Promise.all(ids.map((id) => s.patients.getActive(project, id)))).filter((p): p is Patient => p !== null);
        if (filtered) all = all.filter((p) => p.external_identifiers.some((e) => matchesIdentifier(filters, e)));
      }
      const name = req.query.name?.toLocaleLowerCase();
      if (name !== undefined) all = all.filter((p) => `${p.first_name ?? ""} ${p.last_name ?? ""}`.toLocaleLowerCase().includes(name));
      const page = all.slice(offset, offset + limit);
      req.auditPatients = page.map((p) => p.id);
      return { patients: page.map(publicPatient), total: all.length, has_more: offset + page.length < all.length };
    },
  );

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
      const unstored: unknown[] = [];
      const now = new Date().toISOString();
      await Promise.all(
        req.body.patients.map(async (raw, index) => {
          try {
            const input = parsePatientInput(raw, index);
            const p = newPatient(input, req.principal, now);
            await s.patients.create(p);
            items.push({ index, id: p.id });
          } catch (err) {
            if (err instanceof AppError) return void errors.push({ index, code: err.code === "conflict" ? "conflict" : "validation_error", message: err.message });
            // The others may be created: a 503 for the whole would have them created again on a retry.
            const down = backendUnavailable(err);
            if (down === undefined) throw err;
            unstored.push(err);
            errors.push({ index, code: "storage_error", message: `${down} did not answer: this patient may or may not be created; send it again after looking it up by its external identifiers (a patient without any would be created twice)` });
          }
        }),
      );
      // Nothing created: the usual 503, which says to retry.
      if (unstored.length > 0 && items.length === 0 && unstored.length === errors.length) throw unstored[0];
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
      schema: { summary: "Update a patient (partial: only the fields sent change; external_identifiers are added, never removed)", tags, params: PatientIdParams, body: PatientUpdateSchema, response: responses({ 200: PatientRef }) },
    },
    async (req) => {
      const project = req.principal.project_id;
      const current = publicPatient(await load(project, req.params.id, req.principal.patient_id));
      const body = req.body as Record<string, unknown>;
      // A client may send back what it read (GET, change, PUT): read-only fields pass when
      // unchanged and are refused when not, rather than silently kept or, worse, stored.
      for (const [field, how] of READ_ONLY_FIELDS) {
        if (body[field] !== undefined && JSON.stringify(body[field]) !== JSON.stringify(current[field])) {
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
      const apply = (p: Patient): Patient => ({ ...p, ...changes, updated_at: now });
      const ids = req.body.external_identifiers;
      let updated: Patient | null;
      if (ids !== undefined) {
        if (ids.length === 0) {
          const message = "external_identifiers cannot be emptied here: PUT only adds identifiers; remove them with DELETE /v1/patients/{id}/external-identifiers";
          throw new AppError("validation", message, [fieldIssue(["body", "external_identifiers"], message, ids)]);
        }
        updated = (await s.patients.addIdentifiers(project, req.params.id, uniqueIdentifiers(ids), now, apply))?.patient ?? null;
      } else {
        updated = await s.patients.modify(project, req.params.id, (p) => (p.status === "active" ? apply(p) : undefined));
      }
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
    const problem = patientSchemaProblem(raw);
    if (problem) throw new AppError("validation", `patients[${index}].${problem.message}`, [fieldIssue(["body", "patients", index, ...problem.path], problem.reason, problem.value)]);
    const input = raw as Static<typeof PatientCreateSchema>;
    assertPatientFields(input, ["body", "patients", index]);
    return { ...input, external_identifiers: uniqueIdentifiers(input.external_identifiers ?? []) };
  }
};

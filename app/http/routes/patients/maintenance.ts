import { PatientLog } from "../../../../src/logs/patient-log.js";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { AppError, fieldIssue, notFound } from "../../../../src/errors.js";
import { cleanMatcher, matcherProblem, matchesIdentifier, uniqueIdentifiers, type IdentifierMatcher } from "../../../../src/control/patient-records.js";
import type { ExternalIdentifier, Patient } from "../../../../src/control/patients.js";
import type { Services } from "../../../services.js";
import { responses } from "../../schemas.js";
import { IdentifierMatchersBody, IdentifiersAnswer, IdentifiersBody, PatientIdParams } from "../../../../src/control/patient-schemas.js";
import { QueryParams } from "../../query-params.js";

/** The list a body gives under `identifiers` or `external_identifiers` (`what` it holds); 422 unless exactly one is there. */
function bodyList<T>(body: { identifiers?: T[]; external_identifiers?: T[] }, what: string): { list: T[]; key: string } {
  if (body.identifiers !== undefined && body.external_identifiers !== undefined) {
    const message = "send the identifiers under one key, identifiers or external_identifiers, not both";
    throw new AppError("validation", message, [fieldIssue(["body", "identifiers"], message, body.identifiers)]);
  }
  if (body.identifiers !== undefined) return { list: body.identifiers, key: "identifiers" };
  if (body.external_identifiers !== undefined) return { list: body.external_identifiers, key: "external_identifiers" };
  const message = `the body needs identifiers: a list of ${what} (the key external_identifiers is accepted too)`;
  throw new AppError("validation", message, [fieldIssue(["body", "identifiers"], message, body)]);
}

/** External-identifier edits and deletion: the patient routes that touch more than one record. */
export const patientMaintenanceRoutes: FastifyPluginAsyncTypebox<{
  services: Services;
  load: (project: string, id: string, onlyPatient?: string) => Promise<Patient>;
}> = async (app, { services: s, load }) => {
  const config = { scope: "api:manage-patients" as const };
  const tags = ["patients"];

  app.post(
    "/v1/patients/:id/external-identifiers",
    {
      config,
      schema: {
        summary: "Add external identifiers (present ones are skipped; 409 if another patient holds one)",
        tags,
        params: PatientIdParams,
        body: IdentifiersBody,
        response: responses({ 200: IdentifiersAnswer }),
      },
    },
    async (req) => {
      const project = req.principal.project_id;
      const p = await load(project, req.params.id, req.principal.patient_id);
      const wanted = uniqueIdentifiers(bodyList(req.body, "{system, value}").list);
      const r = await s.patients.addIdentifiers(project, p.id, wanted, new Date().toISOString());
      if (!r) throw notFound("patient", p.id);
      return answer(p.id, r.patient, { added: r.added, removed: [], skipped: r.skipped });
    },
  );

  app.delete(
    "/v1/patients/:id/external-identifiers",
    {
      config,
      schema: {
        summary: "Remove external identifiers matching any matcher: system and value, system alone (all of it) or integration_id",
        tags,
        params: PatientIdParams,
        body: IdentifierMatchersBody,
        response: responses({ 200: IdentifiersAnswer }),
      },
    },
    async (req) => {
      const project = req.principal.project_id;
      const { list, key } = bodyList(req.body, "matchers: {system, value}, {system} or {integration_id}");
      list.forEach((m, i) => {
        const problem = matcherProblem(m);
        if (problem) throw new AppError("validation", `${key}[${i}]: ${problem}`, [fieldIssue(["body", key, i], problem, m)]);
      });
      const matchers = list.map(cleanMatcher);
      const p = await load(project, req.params.id, req.principal.patient_id);
      const now = new Date().toISOString();
      let removed: ExternalIdentifier[] = [];
      const updated = await s.patients.modify(project, p.id, (cur) => {
        if (cur.status !== "active") return undefined;
        removed = cur.external_identifiers.filter((e) => matchers.some((m) => matchesIdentifier(m, e)));
        return { ...cur, external_identifiers: cur.external_identifiers.filter((e) => !removed.includes(e)), updated_at: now };
      });
      if (!updated || updated.status !== "active") throw notFound("patient", p.id);
      await s.patients.releaseIdentifiers(project, removed, p.id);
      const skipped = matchers.filter((m) => !removed.some((e) => matchesIdentifier(m, e)));
      return answer(p.id, updated, { added: [], removed, skipped });
    },
  );

  async function softDelete(p: Patient): Promise<void> {
    const now = new Date().toISOString();
    await s.patients.modify(p.project_id, p.id, (cur) => ({ ...cur, status: "deleted", updated_at: now }));
    // A deleted patient's identifiers may be given to a new patient.
    await s.patients.releaseIdentifiers(p.project_id, p.external_identifiers, p.id);
  }

  app.delete(
    "/v1/patients/:id",
    {
      config,
      schema: {
        summary: "Delete a patient: soft by default; ?permanent=true also erases the patient's logs",
        tags,
        params: PatientIdParams,
        querystring: QueryParams({ permanent: Type.Boolean({ default: false }) }),
        response: responses({ 200: Type.Object({ id: Type.String(), status: Type.Literal("deleted"), permanent: Type.Boolean() }) }),
      },
    },
    async (req) => {
      const { project_id, organization_id } = req.principal;
      if (req.query.permanent) {
        // A soft-deleted patient can still be erased: its logs are kept until then.
        const p = req.principal.patient_id !== undefined && req.principal.patient_id !== req.params.id ? null : await s.patients.get(project_id, req.params.id);
        if (!p) throw notFound("patient", req.params.id);
        // Deleted first, so no log is accepted for it while its logs are erased; then the
        // logs, so a failure in between leaves a deleted patient to erase again (this
        // route, retried), never orphaned logs.
        if (p.status === "active") await softDelete(p);
        await new PatientLog(s.topology).purge({ organization_id, project_id, patient_id: p.id });
        await s.logQuery.erasePatient({ organization_id, project_id }, p.id);
        await s.stateStore.erase(project_id, p.id);
        await s.patients.erase(project_id, p.id);
        return { id: p.id, status: "deleted" as const, permanent: true };
      }
      const p = await load(project_id, req.params.id, req.principal.patient_id);
      await softDelete(p);
      return { id: p.id, status: "deleted" as const, permanent: false };
    },
  );
};

/**
 * The identifier routes' answer: counts as the hosted product's SDKs read them (integers),
 * the identifiers behind each count, and the patient's identifiers after the change.
 */
function answer(patientId: string, p: Patient, lists: { added: ExternalIdentifier[]; removed: ExternalIdentifier[]; skipped: IdentifierMatcher[] }) {
  return {
    patient_id: patientId,
    added: lists.added.length,
    removed: lists.removed.length,
    skipped: lists.skipped.length,
    added_identifiers: lists.added,
    removed_identifiers: lists.removed,
    skipped_identifiers: lists.skipped,
    external_identifiers: p.external_identifiers,
  };
}

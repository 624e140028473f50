import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { notFound } from "../../../errors.js";
import { uniqueIdentifiers } from "../../../control/patient-records.js";
import type { ExternalIdentifier, Patient } from "../../../control/patients.js";
import type { Services } from "../../../services.js";
import { responses } from "../../schemas.js";
import { ExternalIdentifierSchema, IdentifiersBody, PatientIdParams } from "./schemas.js";

const IdentifiersAnswer = Type.Object({
  patient_id: Type.String(),
  added: Type.Array(ExternalIdentifierSchema),
  removed: Type.Array(ExternalIdentifierSchema),
  skipped: Type.Array(ExternalIdentifierSchema, { description: "Already present (add) or absent (remove): nothing to do" }),
  external_identifiers: Type.Array(ExternalIdentifierSchema),
});

const same = (a: ExternalIdentifier, b: ExternalIdentifier) => a.system === b.system && a.value === b.value;

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
      schema: { summary: "Add external identifiers (409 if another patient holds one)", tags, params: PatientIdParams, body: IdentifiersBody, response: responses({ 200: IdentifiersAnswer }) },
    },
    async (req) => {
      const project = req.principal.project_id;
      const p = await load(project, req.params.id, req.principal.patient_id);
      const wanted = uniqueIdentifiers(req.body.external_identifiers);
      const added = wanted.filter((e) => !p.external_identifiers.some((x) => same(x, e)));
      const skipped = wanted.filter((e) => p.external_identifiers.some((x) => same(x, e)));
      const now = new Date().toISOString();
      await s.patients.claimIdentifiers(project, p.id, added, now);
      const updated = await s.patients.modify(project, p.id, (cur) => ({
        ...cur,
        external_identifiers: uniqueIdentifiers([...cur.external_identifiers, ...added]),
        updated_at: now,
      }));
      if (!updated) throw notFound("patient", p.id);
      return { patient_id: p.id, added, removed: [], skipped, external_identifiers: updated.external_identifiers };
    },
  );

  app.delete(
    "/v1/patients/:id/external-identifiers",
    {
      config,
      schema: { summary: "Remove external identifiers", tags, params: PatientIdParams, body: IdentifiersBody, response: responses({ 200: IdentifiersAnswer }) },
    },
    async (req) => {
      const project = req.principal.project_id;
      const p = await load(project, req.params.id, req.principal.patient_id);
      const wanted = uniqueIdentifiers(req.body.external_identifiers);
      const removed = wanted.filter((e) => p.external_identifiers.some((x) => same(x, e)));
      const skipped = wanted.filter((e) => !p.external_identifiers.some((x) => same(x, e)));
      const now = new Date().toISOString();
      const updated = await s.patients.modify(project, p.id, (cur) => ({
        ...cur,
        external_identifiers: cur.external_identifiers.filter((x) => !removed.some((e) => same(x, e))),
        updated_at: now,
      }));
      if (!updated) throw notFound("patient", p.id);
      await s.patients.releaseIdentifiers(project, removed, p.id);
      return { patient_id: p.id, added: [], removed, skipped, external_identifiers: updated.external_identifiers };
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
        querystring: Type.Object({ permanent: Type.Boolean({ default: false }) }),
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
        const subject = s.topology.names.logSubject(organization_id, project_id, p.id);
        await s.topology.jsm.streams.purge(s.topology.names.logsStream, { filter: subject });
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

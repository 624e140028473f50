import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { JobPreviewer, PREVIEW_DEFAULT_PATIENTS, PREVIEW_MAX_PATIENTS } from "../../../actors/ingestion/preview.js";
import type { Services } from "../../services.js";
import { Nullable, responses } from "../schemas.js";
import { ModuleDiffsSchema } from "./state/schemas.js";
import { QueryParams } from "../query-params.js";

/** One patient of a preview: what confirming the job would change in its state. */
const PatientPreviewSchema = Type.Object({
  patient_id: Type.String(),
  name: Nullable(Type.String(), { description: "The patient's first and last name, when it has one" }),
  logs_staged: Type.Integer({ description: "The job's staged logs for the patient" }),
  logs_duplicate: Type.Integer({ description: "Staged logs the replay would pass by: their idempotency_key is stored already, or an earlier line of the file has it" }),
  logs_invalid: Type.Integer({ description: "The patient's log lines skipped at validation for their payload, and staged logs the write path would now refuse" }),
  modules: ModuleDiffsSchema,
});

export const JobPreviewSchema = Type.Object({
  job_id: Type.String(),
  patients_total: Type.Integer({ description: "Patients with staged logs in the job (of the first 1,000 the job details)" }),
  patients: Type.Array(PatientPreviewSchema, { description: "The sample, in the order the job met them" }),
});

/**
 * GET /v1/ingestion/jobs/{id}/preview: what confirming a job awaiting confirmation would
 * change, for a sample of its patients. Read by any api process: staging and the log are
 * in JetStream, and nothing is written.
 *
 * The answer shows each patient's stored state (names, the `before` side of every module
 * the staged logs touch), which GET /v1/state/{pid}/diff guards with sdk:state-read: the
 * preview needs that scope too, so sdk:historical-ingest alone (a key meant to upload
 * files) reads no patient's state. Every patient shown is audited.
 */
export const ingestionPreviewRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  const previewer = new JobPreviewer({ staging: { js: s.topology.js, jsm: s.topology.jsm, publisher: s.publisher, names: s.topology.names }, horizon: s.horizonReader });
  app.get(
    "/v1/ingestion/jobs/:id/preview",
    {
      config: { scope: "sdk:historical-ingest" as const, alsoScopes: ["sdk:state-read"] as const },
      schema: {
        summary:
          "What confirming a job awaiting confirmation would change, for a sample of its patients (or the one named): per patient, its staged logs and the modules and top-level fields that would change, as GET /v1/state/{pid}/diff answers them. Needs sdk:state-read besides sdk:historical-ingest (it shows stored state). Nothing is written; 409 once the job is not awaiting confirmation",
        tags: ["ingestion"],
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
        querystring: QueryParams({
          patient_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "Only this patient of the job (404 when none of the job's staged logs names it)" })),
          limit: Type.Integer({ minimum: 1, maximum: PREVIEW_MAX_PATIENTS, default: PREVIEW_DEFAULT_PATIENTS, description: "Patients in the sample, the first the job met" }),
        }),
        response: responses({ 200: JobPreviewSchema }),
      },
    },
    async (req) => {
      const job = await s.ingestion.get(req.principal.project_id, req.params.id);
      const { patient_id, limit } = req.query;
      const preview = await previewer.preview(req.principal, job, { limit, ...(patient_id !== undefined ? { patient_id } : {}) });
      req.auditPatients = preview.patients.map((p) => p.patient_id);
      return preview;
    },
  );
};

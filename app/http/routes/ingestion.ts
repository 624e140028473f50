import type { Readable } from "node:stream";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { TypeCompiler, ValueErrorType, type TypeCheck } from "@sinclair/typebox/compiler";
import { AppError, fieldIssue } from "../../../src/errors.js";
import type { Services } from "../../services.js";
import { JOB_FORMATS } from "../../../src/ingestion/job-record.js";
import { JobSchema, publicJob, STATUS_FILTERS } from "../../../src/ingestion/job-view.js";
import { MAX_INLINE_RECORDS, viewTypesOf } from "../../../src/ingestion/service.js";
import { responses } from "../schemas.js";
import { QueryParams } from "../query-params.js";

/**
 * A row of a job's inline records, published as a named schema for the OpenAPI document
 * and the client's types. The route does not apply it: the job checks each row as a line
 * of a file, so a bad row is that line's error rather than the request's.
 */
export const IngestionRecordSchema = Type.Object(
  { type: Type.Union([Type.Literal("patient"), Type.Literal("log")]), data: Type.Object({}, { additionalProperties: true, description: "A patient's fields, or a log" }) },
  { $id: "IngestionRecord" },
);

const JobParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const JobPatientParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), patient_id: Type.String({ minLength: 1, maxLength: 128 }) });
const ViewTypes = Type.Array(Type.String({ maxLength: 64 }), { maxItems: 50, description: "View types to backfill; all when absent or empty" });
const ViewTypesBody = Type.Object({
  summary_types: Type.Optional(ViewTypes),
  view_types: Type.Optional(ViewTypes),
  initialize_missing_templates: Type.Optional(Type.Boolean({ description: "Accepted for the hosted product's SDK: no patient lacks a view slot here, so it changes nothing" })),
}, {
  // Closed: confirming cannot be undone, and a misspelt summary_types would confirm with every view type.
  additionalProperties: false,
});
const checkViewTypesBody = TypeCompiler.Compile(ViewTypesBody);

/**
 * The optional body of confirm and retry-backfill. Checked here, not by a route schema:
 * these are often called with no body at all, which a body schema would refuse.
 */
function viewTypesBody(body: unknown): string[] | null {
  if (body === undefined || body === null) return null;
  assertBody(checkViewTypesBody, body);
  return viewTypesOf(body);
}

/**
 * Cancel's optional body, published as a named schema (the route cannot require a body:
 * the hosted product's SDK sends none) and checked by cancelRollback.
 */
export const IngestionCancelSchema = Type.Object(
  { rollback: Type.Optional(Type.Boolean({ description: "true: also remove the patients the job created; false: keep them. Absent: the job's rollback_on_cancel decides" })) },
  // Closed: a typo ({"rollbak":true}) would otherwise cancel as if no body said anything, and a rollback asked for would silently not happen.
  { $id: "IngestionCancel", additionalProperties: false },
);
const checkCancelBody = TypeCompiler.Compile(IngestionCancelSchema);

/** Refuses a body that fails `check`, naming the first bad field as the route schemas do. */
function assertBody<T extends TSchema>(check: TypeCheck<T>, body: unknown): asserts body is Static<T> {
  if (check.Check(body)) return;
  const first = check.Errors(body).First();
  const path = (first?.path ?? "").split("/").filter(Boolean);
  if (first?.type === ValueErrorType.ObjectAdditionalProperties) {
    // Name the field and what is allowed, as the route schemas' "is not an allowed field" does.
    const allowed = Object.keys(check.Schema().properties as object).map((k) => `"${k}"`).join(", ");
    const why = `is not an allowed field (allowed: ${allowed})`;
    throw new AppError("validation", `request validation failed: ${path.join(".")} ${why}`, [fieldIssue(["body", ...path], why, first.value)]);
  }
  throw new AppError("validation", `request validation failed: ${path.join(".") || "body"} ${first?.message ?? "is invalid"}`, [fieldIssue(["body", ...path], first?.message ?? "is invalid", first?.value)]);
}

/** The cancel's own rollback choice, if its body makes one. */
function cancelRollback(body: unknown): boolean | undefined {
  if (body === undefined || body === null) return undefined;
  assertBody(checkCancelBody, body);
  return body.rollback;
}

/** Jobs per page when the caller names no size (the hosted product's default). */
const DEFAULT_PAGE_SIZE = 20;
const PageSize = (description: string) => Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description }));

/** Inline records take more than an ordinary body: 50,000 rows of a few hundred bytes. */
const JOB_BODY_BYTES = 64 * 1024 * 1024;

/** Ingestion jobs (contract "Ingestion jobs", olira-compat §8): upload, create, read, review (change, remove a patient), confirm, cancel, retry the backfill. */
export const ingestionRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  const config = { scope: "sdk:historical-ingest" as const };
  const tags = ["ingestion"];
  const svc = s.ingestion;

  app.post(
    "/v1/ingestion/upload-url",
    {
      config,
      schema: {
        summary: "A one-time URL to PUT a JSONL file to (valid 1 h); pass the s3_key to POST /v1/ingestion/jobs",
        tags,
        response: responses({ 200: Type.Object({ upload_url: Type.String(), s3_key: Type.String(), expires_in: Type.Integer() }) }),
      },
    },
    async (req) => {
      const u = await svc.issueUpload(req.principal);
      return { upload_url: `${req.protocol}://${req.host}/v1/ingestion/uploads/${u.token}`, s3_key: u.s3_key, expires_in: u.expires_in };
    },
  );

  // The upload itself: the token in the path is the credential (like a presigned URL),
  // and the body streams to the object store, never whole in memory.
  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser("*", (_req, payload, done) => done(null, payload));
    raw.put(
      "/v1/ingestion/uploads/:token",
      {
        config: { scope: false },
        bodyLimit: s.config.maxUploadBytes,
        schema: {
          summary: "Upload the JSONL file (raw body) to a URL from POST /v1/ingestion/upload-url; once only",
          tags,
          params: Type.Object({ token: Type.String({ minLength: 1, maxLength: 100 }) }),
          response: responses({ 200: Type.Object({ s3_key: Type.String(), size: Type.Integer() }) }),
        },
      },
      // No body parsed (an empty body sent without a content type): the request stream itself, empty.
      async (req) => svc.receiveUpload((req.params as { token: string }).token, (req.body as Readable | undefined) ?? req.raw),
    );
  });

  app.post(
    "/v1/ingestion/jobs",
    {
      config,
      bodyLimit: Math.max(s.config.maxBodyBytes, JOB_BODY_BYTES),
      schema: {
        summary: "Start an ingestion job from an uploaded file (s3_key) or inline records",
        tags,
        body: Type.Object({
          s3_key: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
          records: Type.Optional(Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_INLINE_RECORDS, description: 'Rows {"type":"patient"|"log","data":{...}}, or FHIR resources and Bundles; line n of the job is records[n-1]' })),
          format: Type.Optional(Type.Union(JOB_FORMATS.map((f) => Type.Literal(f)), { description: '"jsonl" (patient and log rows) or "fhir" (FHIR R4 resources or Bundles, one a line, as a Bulk Data export writes them); absent: read from the first line' })),
          idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
          require_confirmation: Type.Optional(Type.Boolean({ description: "Default true: wait in AWAITING_CONFIRMATION before touching patient state" })),
          rollback_on_cancel: Type.Optional(Type.Boolean({ description: "Default false: on cancel, also remove the patients the job created" })),
          summary_types: Type.Optional(ViewTypes),
          view_types: Type.Optional(ViewTypes),
          max_event_logs: Type.Optional(Type.Integer({ minimum: 1, description: "Accepted for the hosted product's SDK (its per-patient cap on logs a view backfill reads) and ignored: views here fold every log" })),
        }, {
          // Closed: a misspelt rollback_on_cancel, summary_types or idempotency_key would otherwise start a job without what it asked for.
          additionalProperties: false,
        }),
        response: responses({ 201: JobSchema }),
      },
    },
    async (req, reply) => reply.status(201).send(publicJob(await svc.createJob(req.principal, req.body))),
  );

  app.get(
    "/v1/ingestion/jobs",
    {
      config,
      schema: {
        summary: "The project's ingestion jobs, newest first, a page at a time (page and pageSize, or limit)",
        tags,
        querystring: QueryParams({
          status: Type.Optional(Type.Union(STATUS_FILTERS.map((x) => Type.Literal(x)), { description: 'A job status; "running": every job at work (validating to backfilling)' })),
          idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "Only the jobs created with this key" })),
          page: Type.Integer({ minimum: 1, default: 1, description: "1-based page number" }),
          pageSize: PageSize(`Jobs per page (default ${DEFAULT_PAGE_SIZE}); page_size and limit are its other names`),
          page_size: PageSize("Jobs per page: another name of pageSize"),
          limit: PageSize("Jobs per page: another name of pageSize"),
        }),
        response: responses({
          200: Type.Object({ total: Type.Integer({ description: "Jobs matching the filters" }), jobs: Type.Array(JobSchema), page: Type.Integer(), page_size: Type.Integer(), has_more: Type.Boolean() }),
        }),
      },
    },
    async (req) => {
      const q = req.query;
      const size = q.pageSize ?? q.page_size ?? q.limit ?? DEFAULT_PAGE_SIZE;
      const offset = (q.page - 1) * size;
      const r = await svc.list(req.principal.project_id, { status: q.status, idempotency_key: q.idempotency_key, offset, limit: size });
      return { total: r.total, jobs: r.jobs.map(publicJob), page: q.page, page_size: size, has_more: offset + r.jobs.length < r.total };
    },
  );

  app.get(
    "/v1/ingestion/jobs/:id",
    { config, schema: { summary: "One ingestion job, with its progress", tags, params: JobParams, response: responses({ 200: JobSchema }) } },
    async (req) => publicJob(await svc.get(req.principal.project_id, req.params.id)),
  );

  app.post(
    "/v1/ingestion/jobs/:id/confirm",
    {
      config,
      schema: {
        summary:
          'Confirm a job awaiting confirmation: its logs replay into patient state, then the chosen views are backfilled. No body, or {"summary_types":[...]} (alias view_types), or {"initialize_missing_templates":true} (changes nothing here)',
        tags,
        params: JobParams,
        response: responses({ 200: JobSchema }),
      },
    },
    async (req) => {
      const types = viewTypesBody(req.body);
      const job = await svc.control({ op: "confirm", project_id: req.principal.project_id, job_id: req.params.id, ...(types ? { summary_types: types } : {}) });
      return publicJob(job);
    },
  );

  app.patch(
    "/v1/ingestion/jobs/:id",
    {
      config,
      schema: {
        summary: "Change what confirming a job awaiting confirmation will do: the view types to backfill, or no backfill at all",
        tags,
        params: JobParams,
        body: Type.Object(
          {
            summary_types: Type.Optional(ViewTypes),
            view_types: Type.Optional(ViewTypes),
            skip_backfill: Type.Optional(Type.Boolean({ description: "true: complete after the replay without a view backfill (backfill_status skipped; retry-backfill runs one later)" })),
          },
          { additionalProperties: false },
        ),
        response: responses({ 200: JobSchema }),
      },
    },
    async (req) => {
      const types = viewTypesOf(req.body);
      const { skip_backfill } = req.body;
      const job = await svc.control({
        op: "revise",
        project_id: req.principal.project_id,
        job_id: req.params.id,
        ...(types ? { summary_types: types } : {}),
        ...(skip_backfill !== undefined ? { skip_backfill } : {}),
      });
      return publicJob(job);
    },
  );

  app.delete(
    "/v1/ingestion/jobs/:id/patients/:patient_id",
    {
      config,
      schema: {
        summary: "Take a patient out of a job awaiting confirmation: its staged logs are dropped, and the patient deleted if the job created it. Answers the job",
        tags,
        params: JobPatientParams,
        response: responses({ 200: JobSchema }),
      },
    },
    async (req) => publicJob(await svc.control({ op: "remove_patient", project_id: req.principal.project_id, job_id: req.params.id, patient_id: req.params.patient_id })),
  );

  app.post(
    "/v1/ingestion/jobs/:id/cancel",
    {
      config,
      schema: {
        summary:
          'Cancel a job before its replay starts. No body: the job\'s rollback_on_cancel decides whether the patients it created go too; {"rollback":true|false} decides for this cancel (the job then shows it as rollback_on_cancel)',
        tags,
        params: JobParams,
        response: responses({ 200: JobSchema }),
      },
    },
    async (req) => {
      const rollback = cancelRollback(req.body);
      return publicJob(await svc.control({ op: "cancel", project_id: req.principal.project_id, job_id: req.params.id, ...(rollback !== undefined ? { rollback } : {}) }));
    },
  );

  app.post(
    "/v1/ingestion/jobs/:id/retry-backfill",
    {
      config,
      schema: {
        summary: 'Run a completed job\'s view backfill again (for example after it failed); optional body {"summary_types":[...]}',
        tags,
        params: JobParams,
        response: responses({ 200: JobSchema }),
      },
    },
    async (req) => {
      const types = viewTypesBody(req.body);
      const job = await svc.control({ op: "retry_backfill", project_id: req.principal.project_id, job_id: req.params.id, ...(types ? { summary_types: types } : {}) });
      return publicJob(job);
    },
  );
};

import type { Readable } from "node:stream";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { AppError, fieldIssue } from "../../errors.js";
import type { Services } from "../../services.js";
import { JobSchema, publicJob, STATUSES } from "../../ingestion/job-record.js";
import { MAX_INLINE_RECORDS, viewTypesOf } from "../../ingestion/service.js";
import { responses } from "../schemas.js";

const JobParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
const ViewTypes = Type.Array(Type.String({ maxLength: 64 }), { maxItems: 50, description: "View types to backfill; all when absent" });
const ViewTypesBody = Type.Object({ summary_types: Type.Optional(ViewTypes), view_types: Type.Optional(ViewTypes) });
const checkViewTypesBody = TypeCompiler.Compile(ViewTypesBody);

/**
 * The optional body of confirm and retry-backfill. Checked here, not by a route schema:
 * these are often called with no body at all, which a body schema would refuse.
 */
function viewTypesBody(body: unknown): string[] | null {
  if (body === undefined || body === null) return null;
  if (!checkViewTypesBody.Check(body)) {
    const first = checkViewTypesBody.Errors(body).First();
    const path = (first?.path ?? "").split("/").filter(Boolean);
    throw new AppError("validation", `request validation failed: ${path.join(".") || "body"} ${first?.message ?? "is invalid"}`, [fieldIssue(["body", ...path], first?.message ?? "is invalid", first?.value)]);
  }
  return viewTypesOf(body);
}

/** Inline records take more than an ordinary body: 50,000 rows of a few hundred bytes. */
const JOB_BODY_BYTES = 64 * 1024 * 1024;

/** Ingestion jobs (contract "Ingestion jobs"): upload, create, read, confirm, cancel, retry the backfill. */
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
          records: Type.Optional(Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_INLINE_RECORDS, description: 'Rows {"type":"patient"|"log","data":{...}}; line n of the job is records[n-1]' })),
          idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
          require_confirmation: Type.Optional(Type.Boolean({ description: "Default true: wait in AWAITING_CONFIRMATION before touching patient state" })),
          rollback_on_cancel: Type.Optional(Type.Boolean({ description: "Default false: on cancel, also remove the patients the job created" })),
          summary_types: Type.Optional(ViewTypes),
          view_types: Type.Optional(ViewTypes),
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
        summary: "The project's ingestion jobs, newest first",
        tags,
        querystring: Type.Object({
          status: Type.Optional(Type.Union(STATUSES.map((x) => Type.Literal(x)))),
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 50 }),
        }),
        response: responses({ 200: Type.Object({ total: Type.Integer(), jobs: Type.Array(JobSchema) }) }),
      },
    },
    async (req) => {
      const r = await svc.list(req.principal.project_id, req.query.status, req.query.limit);
      return { total: r.total, jobs: r.jobs.map(publicJob) };
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
        summary: 'Confirm a job awaiting confirmation: its logs replay into patient state, then the chosen views are backfilled. Optional body {"summary_types":[...]} (alias view_types)',
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

  app.post(
    "/v1/ingestion/jobs/:id/cancel",
    {
      config,
      schema: {
        summary: "Cancel a job before its replay starts; rollback_on_cancel decides whether the patients it created go too",
        tags,
        params: JobParams,
        response: responses({ 200: JobSchema }),
      },
    },
    async (req) => publicJob(await svc.control({ op: "cancel", project_id: req.principal.project_id, job_id: req.params.id })),
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

import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { Bundle } from "@medplum/fhirtypes";
import { AppError, fieldIssue } from "../../../src/errors.js";
import { writeBundle } from "../../../src/fhir/bundle-write.js";
import { writeResource } from "../../../src/fhir/resource-write.js";
import { MAPPED_TYPES } from "../../../fhir/inbound/index.js";
import type { Resource } from "../../../fhir/types.js";
import type { Services } from "../../services.js";
import { Nullable, responses } from "../schemas.js";
import { BatchAnswerSchema } from "./logs/batch.js";
import { QueryParams } from "../query-params.js";

const FhirResourceSchema = Type.Object(
  { resourceType: Type.String({ minLength: 1, description: "Any FHIR R4 resource type; GET /v1/fhir/metadata lists those mapped to logs" }) },
  { additionalProperties: true, description: "A FHIR R4 resource (JSON)" },
);

const FhirBundleSchema = Type.Object(
  {
    resourceType: Type.Literal("Bundle"),
    type: Type.Union([Type.Literal("batch"), Type.Literal("transaction"), Type.Literal("collection")]),
    entry: Type.Optional(Type.Array(Type.Object({ fullUrl: Type.Optional(Type.String()), resource: Type.Optional(FhirResourceSchema) }, { additionalProperties: true }))),
  },
  { additionalProperties: true, description: "A FHIR R4 Bundle of type batch, transaction or collection" },
);

const BundleAnswer = Type.Object(
  { resourceType: Type.Literal("Bundle"), type: Type.String(), entry: Type.Array(Type.Object({}, { additionalProperties: true })) },
  { additionalProperties: true, description: "A batch-response (or transaction-response) Bundle: per entry, a status and an OperationOutcome" },
);

export const fhirRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  const tags = ["fhir"];
  const scopeOf = (p: { organization_id: string; project_id: string; patient_id?: string }) => ({
    organization_id: p.organization_id,
    project_id: p.project_id,
    ...(p.patient_id !== undefined ? { only_patient_id: p.patient_id } : {}),
  });

  app.get(
    "/v1/fhir/metadata",
    {
      config: { scope: "sdk:event-log" },
      schema: { summary: "The FHIR CapabilityStatement: the resource types mapped to patient logs, and Bundles taken", tags, response: responses({ 200: Type.Object({}, { additionalProperties: true }) }) },
    },
    async (_req, reply) =>
      reply.header("content-type", "application/fhir+json; charset=utf-8").send({
        resourceType: "CapabilityStatement",
        status: "active",
        date: "2026-11-27",
        kind: "instance",
        fhirVersion: "4.0.1",
        format: ["application/fhir+json", "application/json"],
        rest: [
          {
            mode: "server",
            documentation: "POST /v1/fhir/resource takes one resource for a patient; POST /v1/fhir takes a batch, transaction or collection Bundle. Terminology is taken by code as sent.",
            resource: MAPPED_TYPES.map((type) => ({ type, interaction: [{ code: "create" }] })),
            interaction: [{ code: "batch" }, { code: "transaction" }],
          },
        ],
      }),
  );

  app.post(
    "/v1/fhir/resource",
    {
      config: { scope: "sdk:event-log" },
      bodyLimit: Math.max(s.config.maxBodyBytes, s.config.maxBatchBodyBytes),
      schema: {
        summary: "Store one FHIR R4 resource as the patient logs it maps to (the hosted SDK's log_fhir)",
        description:
          "The patient is the body's patient_id, never the resource's subject. A resource that cannot be mapped or is not valid FHIR answers 200 with accepted 0 and a located error; " +
          "a retry with the same idempotency_key (or, without one, the same content) stores nothing and counts its logs as accepted.",
        tags,
        body: Type.Object({
          patient_id: Type.String({ minLength: 1 }),
          resource: FhirResourceSchema,
          idempotency_key: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200, description: "Derived logs are keyed <key>:<n>" }))),
        }),
        response: responses({ 200: BatchAnswerSchema }),
      },
    },
    async (req) => {
      const { patient_id, resource, idempotency_key } = req.body;
      const answer = await writeResource(s.logWriter, scopeOf(req.principal), {
        patient_id,
        resource: resource as Resource,
        ...(idempotency_key ? { idempotency_key } : {}),
      });
      if (answer.errors.some((e) => e.code === "storage_error") && answer.accepted === 0) {
        throw new AppError("unavailable", "log storage did not confirm the resource's logs; send it again (with the same idempotency_key, or unchanged)", [
          { type: "storage_error", message: answer.errors[0]!.message },
        ]);
      }
      return answer;
    },
  );

  app.post(
    "/v1/fhir",
    {
      config: { scope: "sdk:event-log" },
      bodyLimit: Math.max(s.config.maxBodyBytes, s.config.maxBatchBodyBytes),
      schema: {
        summary: "Store a FHIR R4 Bundle (batch, transaction or collection); answers a batch-response Bundle",
        description:
          "Each entry's patient is the Patient entry its subject (or patient) references, found by id or identifier (created with create_patients=true), " +
          "or a patient of this project named Patient/<id>, or patient_id. A transaction is stored whole or refused whole (422). Sending a Bundle again stores nothing twice.",
        tags,
        querystring: QueryParams({
          patient_id: Type.Optional(Type.String({ minLength: 1, description: "The patient of entries that reference none" })),
          create_patients: Type.Boolean({ default: false, description: "Create the patient of a Patient entry none of whose identifiers is known (needs api:manage-patients)" }),
        }),
        body: FhirBundleSchema,
        response: responses({ 200: BundleAnswer }),
      },
      // A single resource sent here would first be told it lacks the Bundle's `type`.
      preValidation: async (req) => {
        const type = (req.body as { resourceType?: unknown } | null | undefined)?.resourceType;
        if (typeof type !== "string" || type === "Bundle") return;
        const one = /^[A-Z][A-Za-z]{0,63}$/.test(type) ? `one ${type}` : "a single resource";
        const message = `must be "Bundle": POST /v1/fhir takes a batch, transaction or collection Bundle; send ${one} to POST /v1/fhir/resource with its patient_id, or wrap it in a Bundle`;
        throw new AppError("validation", `request validation failed: resourceType ${message}`, [fieldIssue(["body", "resourceType"], message, type)]);
      },
    },
    async (req, reply) => {
      if (req.query.create_patients && !req.principal.scopes.has("api:manage-patients")) {
        throw new AppError("authorization", "create_patients=true needs the api:manage-patients scope; create the patients first or use a key with that scope");
      }
      const entries = req.body.entry?.length ?? 0;
      if (entries > s.config.maxBatchLogs) {
        throw new AppError("validation", `a Bundle holds at most ${s.config.maxBatchLogs} entries here; split it`, [{ type: "too_long", message: `at most ${s.config.maxBatchLogs} entries`, field: "body.entry", location: ["body", "entry"] }]);
      }
      const { answer, patients } = await writeBundle({ writer: s.logWriter, patients: s.patients }, scopeOf(req.principal), req.body as Bundle, {
        create_patients: req.query.create_patients,
        ...(req.query.patient_id !== undefined ? { patient_id: req.query.patient_id } : {}),
      });
      req.auditPatients = patients;
      return reply.header("content-type", "application/fhir+json; charset=utf-8").send(answer);
    },
  );
};

import { Type, type TSchema } from "@sinclair/typebox";
import { Nullable, OpenObject } from "../../catalog/schemas/common.js";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { toIssues } from "../../catalog/errors.js";

const identifierParts = {
  system: Type.String({ minLength: 1, maxLength: 200, description: "Issuing system, e.g. an MRN namespace URI" }),
  value: Type.String({ minLength: 1, maxLength: 200 }),
  integration_id: Type.String({ minLength: 1, maxLength: 200, description: "The integration instance the identifier came from; stored and echoed as given" }),
};

/** An identifier as bodies take it: (system, value) is its identity; null integration_id is none. */
export const ExternalIdentifierSchema = Type.Object({
  system: identifierParts.system,
  value: identifierParts.value,
  integration_id: Type.Optional(Nullable(identifierParts.integration_id)),
});

/** An identifier as answers give it: integration_id only when it has one. */
export const ExternalIdentifierOutSchema = Type.Object({
  system: Type.String(),
  value: Type.String(),
  integration_id: Type.Optional(Type.String()),
});

/**
 * What DELETE .../external-identifiers removes: every identifier whose fields equal all
 * those given (system alone: all of that system; integration_id alone: all of that
 * integration). A value needs its system; null is "not given".
 */
export const IdentifierMatcherSchema = Type.Object({
  system: Type.Optional(Nullable(identifierParts.system)),
  value: Type.Optional(Nullable(identifierParts.value)),
  integration_id: Type.Optional(Nullable(identifierParts.integration_id)),
});

const fields = {
  first_name: Type.String({ maxLength: 200 }),
  last_name: Type.String({ maxLength: 200 }),
  email: Type.String({ maxLength: 320 }),
  phone_number: Type.String({ maxLength: 50 }),
  date_of_birth: Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}([T ].*)?$", description: "ISO 8601 date or datetime" }),
  sex: Type.String({ maxLength: 50 }),
  primary_disease_site: Type.String({ maxLength: 200, description: "Free text, e.g. breast" }),
  disease_stage: Type.String({ maxLength: 100, description: "Free text, e.g. IIIA" }),
  timezone: Type.String({ maxLength: 64, description: "IANA zone name; default UTC" }),
  metadata: OpenObject,
};

/** The patient's own fields as a body takes them; null is "not known", as a patient answers it. */
const editable = {
  first_name: Type.Optional(Nullable(fields.first_name)),
  last_name: Type.Optional(Nullable(fields.last_name)),
  email: Type.Optional(Nullable(fields.email)),
  phone_number: Type.Optional(Nullable(fields.phone_number)),
  date_of_birth: Type.Optional(Nullable(fields.date_of_birth)),
  sex: Type.Optional(Nullable(fields.sex)),
  primary_disease_site: Type.Optional(Nullable(fields.primary_disease_site)),
  disease_stage: Type.Optional(Nullable(fields.disease_stage)),
  timezone: Type.Optional(fields.timezone),
  metadata: Type.Optional(fields.metadata),
};

/** On create, null is "not known" for every field: the zone is then UTC, the rest empty. */
export const PatientCreateSchema = Type.Object({
  ...editable,
  timezone: Type.Optional(Nullable(fields.timezone)),
  metadata: Type.Optional(Nullable(fields.metadata)),
  external_identifiers: Type.Optional(Nullable(Type.Array(ExternalIdentifierSchema, { maxItems: 50 }))),
});

/** The fields PUT sets to what it is sent (a partial update: only the fields sent change). */
export const UPDATABLE_FIELDS = Object.keys(editable);

/**
 * PUT's body. external_identifiers there only adds (pairs already present are skipped);
 * removing one is DELETE /v1/patients/{id}/external-identifiers.
 */
export const PatientUpdateSchema = Type.Object({
  ...editable,
  external_identifiers: Type.Optional(
    Type.Array(ExternalIdentifierSchema, { maxItems: 50, description: "Added to the patient's identifiers (add-only merge); an empty list is refused" }),
  ),
});

export const PatientSchema = Type.Object(
  {
    id: Type.String(),
    first_name: Nullable(Type.String()),
    last_name: Nullable(Type.String()),
    email: Nullable(Type.String()),
    phone_number: Nullable(Type.String()),
    date_of_birth: Nullable(Type.String()),
    sex: Nullable(Type.String()),
    primary_disease_site: Nullable(Type.String()),
    disease_stage: Nullable(Type.String()),
    timezone: Type.String(),
    status: Type.String({ description: "active, or deleted after a soft delete" }),
    external_identifiers: Type.Array(ExternalIdentifierOutSchema),
    metadata: OpenObject,
    created_at: Type.String(),
  },
  { $id: "Patient" },
);

export const PatientIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

const listOf = <T extends TSchema>(item: T) => Type.Array(item, { minItems: 1, maxItems: 50 });

/** POST .../external-identifiers: `identifiers` (the hosted product's SDKs) or `external_identifiers`, one of them. */
export const IdentifiersBody = Type.Object({
  identifiers: Type.Optional(listOf(ExternalIdentifierSchema)),
  external_identifiers: Type.Optional(listOf(ExternalIdentifierSchema)),
});

/** DELETE .../external-identifiers: matchers under either key, one of them. */
export const IdentifierMatchersBody = Type.Object({
  identifiers: Type.Optional(listOf(IdentifierMatcherSchema)),
  external_identifiers: Type.Optional(listOf(IdentifierMatcherSchema)),
});

/** What the identifier routes answer: counts, the lists behind them, and the patient's identifiers after the change. */
export const IdentifiersAnswer = Type.Object({
  patient_id: Type.String(),
  added: Type.Integer({ description: "How many identifiers were added" }),
  removed: Type.Integer({ description: "How many identifiers were removed" }),
  skipped: Type.Integer({ description: "How many needed no change: already present (add) or matching nothing (remove)" }),
  added_identifiers: Type.Array(ExternalIdentifierOutSchema),
  removed_identifiers: Type.Array(ExternalIdentifierOutSchema),
  skipped_identifiers: Type.Array(IdentifierMatcherSchema, { description: "The identifiers (add) or matchers (remove) counted in skipped" }),
  external_identifiers: Type.Array(ExternalIdentifierOutSchema),
});

const checkPatientCreate = TypeCompiler.Compile(PatientCreateSchema);

/**
 * What is wrong with a patient as POST /v1/patients/batch and ingestion rows take one, in
 * the catalog's words ("first_name must be string or null"), or null when it fits the schema.
 */
export function patientSchemaProblem(raw: unknown): { path: (string | number)[]; reason: string; message: string; value: unknown } | null {
  if (checkPatientCreate.Check(raw)) return null;
  const [first] = toIssues(checkPatientCreate.Errors(raw), raw);
  const path = first?.path ?? [];
  const reason = first?.message ?? "is invalid";
  return { path, reason, message: `${path.join(".") || "patient"}: ${reason}`, value: first ? first.value : raw };
}

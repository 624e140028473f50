import { Type } from "@sinclair/typebox";
import { Nullable, OpenObject } from "../../schemas.js";

export const ExternalIdentifierSchema = Type.Object({
  system: Type.String({ minLength: 1, maxLength: 200, description: "Issuing system, e.g. an MRN namespace URI" }),
  value: Type.String({ minLength: 1, maxLength: 200 }),
});

const fields = {
  first_name: Type.String({ maxLength: 200 }),
  last_name: Type.String({ maxLength: 200 }),
  email: Type.String({ maxLength: 320 }),
  phone_number: Type.String({ maxLength: 50 }),
  date_of_birth: Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}([T ].*)?$", description: "ISO 8601 date or datetime" }),
  sex: Type.String({ maxLength: 50 }),
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
  timezone: Type.Optional(fields.timezone),
  metadata: Type.Optional(fields.metadata),
};

export const PatientCreateSchema = Type.Object({
  ...editable,
  external_identifiers: Type.Optional(Type.Array(ExternalIdentifierSchema, { maxItems: 50 })),
});

/** PUT is a partial update: only the fields sent change; identifiers have their own routes. */
export const PatientUpdateSchema = Type.Object(editable);

export const PatientSchema = Type.Object(
  {
    id: Type.String(),
    first_name: Nullable(Type.String()),
    last_name: Nullable(Type.String()),
    email: Nullable(Type.String()),
    phone_number: Nullable(Type.String()),
    date_of_birth: Nullable(Type.String()),
    sex: Nullable(Type.String()),
    timezone: Type.String(),
    status: Type.String({ description: "active, or deleted after a soft delete" }),
    external_identifiers: Type.Array(ExternalIdentifierSchema),
    metadata: OpenObject,
    created_at: Type.String(),
  },
  { $id: "Patient" },
);

export const PatientIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const IdentifiersBody = Type.Object({ external_identifiers: Type.Array(ExternalIdentifierSchema, { minItems: 1, maxItems: 50 }) });

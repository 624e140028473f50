import { Type, type TSchema } from "@sinclair/typebox";

/** The spec's error body: every non-2xx answer has this shape. */
export const ErrorBodySchema = Type.Object(
  {
    error: Type.Literal(true),
    status_code: Type.Integer(),
    error_type: Type.String(),
    message: Type.String(),
    details: Type.Array(Type.Object({ type: Type.String(), message: Type.String() }, { additionalProperties: true })),
    timestamp: Type.String({ format: "date-time" }),
  },
  { $id: "ErrorBody", description: "Error body used by every failure" },
);

export const ErrorRef = Type.Unsafe<typeof ErrorBodySchema.static>(Type.Ref("ErrorBody"));

/** A route's response schemas: its success shapes plus the shared error body for 4xx and 5xx. */
export function responses<T extends Record<number, TSchema>>(ok: T) {
  return { ...ok, "4xx": ErrorRef, "5xx": ErrorRef };
}

export { Nullable, OpenObject } from "../../catalog/schemas/common.js";

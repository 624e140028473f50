import { Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { AuditEntry } from "./audit-log.js";

const text = Type.String();
const orNull = (t: typeof text) => Type.Union([t, Type.Null()]);

/** An entry as AuditLog.append stores it (AuditEntry): what a reader may rely on. */
const StoredEntry = Type.Object({
  at: Type.String(),
  organization_id: text,
  project_id: text,
  key_id: text,
  credential: Type.Union([Type.Literal("api_key"), Type.Literal("jwt"), Type.Literal("patient_token")]),
  method: text,
  route: text,
  tool: orNull(text),
  patient_id: orNull(text),
  patient_ids: Type.Array(text),
  patient_ids_omitted: Type.Optional(Type.Integer()),
  status: Type.Integer(),
  request_id: text,
});
const isStoredEntry = TypeCompiler.Compile(StoredEntry);
const textDecoder = new TextDecoder();

/**
 * A message of the audit stream as an entry, or null for one the service did not write
 * (not JSON, another shape, a time that is no time): a reader of the trail skips it
 * rather than failing the page. Only the service's NATS account can publish there.
 */
export function readAuditEntry(data: Uint8Array): AuditEntry | null {
  let body: unknown;
  try {
    body = JSON.parse(textDecoder.decode(data));
  } catch {
    return null;
  }
  return isStoredEntry.Check(body) && !Number.isNaN(Date.parse(body.at)) ? (body) : null;
}

import { isIdToken } from "../ids.js";
import type { AuditEntry } from "./audit-log.js";

/** Longest text kept of a field a client can choose (an MCP tool name or resource URI); longer ones are cut and marked. */
export const MAX_FIELD_CHARS = 256;

/**
 * Room kept for `"patient_ids_omitted":<count>` and the closing of the list, in bytes:
 * the list is filled against what is left.
 */
const OMITTED_ROOM = 40;

/** `s`, or its first `max` characters marked with its length; never ends inside a surrogate pair. */
export function clip(s: string, max = MAX_FIELD_CHARS): string {
  if (s.length <= max) return s;
  const end = /[\uD800-\uDBFF]/.test(s[max - 1]!) ? max - 1 : max;
  return `${s.slice(0, end)}… (${s.length} characters)`;
}

/**
 * The entry as JSON of at most `maxBytes` bytes, whatever a request carried. Free text
 * is cut to MAX_FIELD_CHARS; a patient id that cannot be one (over 64 characters, other
 * characters than letters, digits, `_` and `-`) names no patient and is not listed; the
 * valid ids are listed, each once, in the order named, for as long as they fit. What is
 * not listed is counted in `patient_ids_omitted`, so a trail reader knows the list is
 * partial. Ids are ASCII, so a listed id costs its length plus quotes and comma.
 */
export function encodeEntry(e: AuditEntry, maxBytes: number): string {
  const named = [...new Set(e.patient_ids)];
  const valid = named.filter((id) => isIdToken(id));
  const fixed: AuditEntry = {
    at: clip(e.at),
    organization_id: clip(e.organization_id),
    project_id: clip(e.project_id),
    key_id: clip(e.key_id),
    credential: e.credential,
    method: clip(e.method),
    route: clip(e.route),
    tool: e.tool === null ? null : clip(e.tool),
    patient_id: isIdToken(e.patient_id) ? e.patient_id : null,
    patient_ids: [],
    status: e.status,
    request_id: clip(e.request_id),
  };
  let room = maxBytes - Buffer.byteLength(JSON.stringify(fixed)) - OMITTED_ROOM;
  let listed = 0;
  for (; listed < valid.length; listed++) {
    room -= valid[listed]!.length + 3;
    if (room < 0) break;
  }
  const omitted = named.length - listed + (e.patient_ids_omitted ?? 0);
  return JSON.stringify({ ...fixed, patient_ids: valid.slice(0, listed), ...(omitted > 0 ? { patient_ids_omitted: omitted } : {}) });
}

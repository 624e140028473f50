import type { ModuleDiff } from "../../../client/types.js";

/** A changed field of a module, as GET /v1/state/{pid}/diff and a job's preview answer it. */
export type FieldChange = ModuleDiff["fields"][number];

/** Characters of one value shown; the patient page has the rest. */
const VALUE_CHARS = 160;

export const words = (s: string) => s.replaceAll("_", " ");

function show(v: unknown): string {
  if (v === null || v === undefined) return "—";
  if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return v.length === 0 ? "none" : v.map(show).join("; ");
  const o = v as Record<string, unknown>;
  if ("value" in o && (typeof o.value !== "object" || o.value === null)) return [show(o.value), typeof o.unit === "string" ? o.unit : ""].join(" ").trim();
  // Empty members (an empty context, no extensions) say nothing a reader needs.
  return Object.entries(o)
    .filter(([k, x]) => k !== "log_id" && x !== null && x !== undefined && !(typeof x === "object" && Object.keys(x).length === 0))
    .map(([k, x]) => `${words(k)}: ${show(x)}`)
    .join(", ");
}

/**
 * A value of a module's field as a clinician reads it: a reading's `value` (with its unit
 * when it has one) rather than its bookkeeping, members as `name: value`, ids left out.
 */
export function showValue(v: unknown): string {
  const text = show(v);
  return text.length > VALUE_CHARS ? `${text.slice(0, VALUE_CHARS - 1)}…` : text;
}

/** A field's before and after as shown: its values, or for a summarized one its entry counts. */
export function beforeAfter(f: FieldChange): [string, string] {
  const s = f.summary;
  if (s) return [`${s.before_members ?? 0} entries`, `${s.after_members ?? 0} entries (${s.added} added, ${s.removed} removed)`];
  return [showValue(f.before), showValue(f.after)];
}

import { EVENT_MODULES, STABLE_MODULES, type ModuleKey, type ModuleKind } from "./module.js";
import { moduleEntry, type PatientState } from "./patient-state.js";
import { MODELS } from "./registry.js";

/**
 * A changed field too large to show whole, as counts: its members are an array's items or
 * an object's `key: value` pairs, compared as wholes, so an entry that changed counts as
 * one removed and one added.
 */
export interface FieldSummary {
  before_members: number | null;
  after_members: number | null;
  added: number;
  removed: number;
}

/** One top-level payload field that differs: its values, or (too large) a summary in their place. */
export interface FieldChange {
  field: string;
  /** The value before (null: absent, or summarized). */
  before: unknown;
  after: unknown;
  summary: FieldSummary | null;
}

export interface ModuleDiff {
  module_type: ModuleKey;
  kind: ModuleKind;
  /** created: no data before; removed: none after (a later state never drops a module, but the diff does not assume it). */
  op: "created" | "updated" | "removed";
  updated_at: { before: string | null; after: string | null };
  fields: FieldChange[];
}

export interface DiffLimits {
  /** A value whose JSON is longer is summarized. @default 4_096 */
  valueChars: number;
  /** Once the values shown pass this many characters of JSON, every further change is summarized. @default 65_536 */
  totalChars: number;
}

const DEFAULTS: DiffLimits = { valueChars: 4_096, totalChars: 65_536 };

/** JSON with object keys sorted: equal content, equal text, whatever order the fold wrote keys in. */
export function canonicalJson(v: unknown): string {
  if (v === undefined) return "null";
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(",")}}`;
}

/** An array's items, or an object's pairs, as canonical text; null for a scalar. */
function members(v: unknown): string[] | null {
  if (Array.isArray(v)) return v.map(canonicalJson);
  if (v !== null && typeof v === "object") return Object.entries(v as Record<string, unknown>).map(([k, x]) => canonicalJson({ [k]: x }));
  return null;
}

/** How many of `a` (a multiset) are not matched in `b`. */
function missingFrom(a: readonly string[], b: readonly string[]): number {
  const left = new Map<string, number>();
  for (const x of b) left.set(x, (left.get(x) ?? 0) + 1);
  let n = 0;
  for (const x of a) {
    const k = left.get(x) ?? 0;
    if (k > 0) left.set(x, k - 1);
    else n++;
  }
  return n;
}

export function summarize(before: unknown, after: unknown): FieldSummary {
  const a = members(before);
  const b = members(after);
  return { before_members: a?.length ?? null, after_members: b?.length ?? null, added: missingFrom(b ?? [], a ?? []), removed: missingFrom(a ?? [], b ?? []) };
}

/**
 * What differs between two states of one patient: each module whose payload differs (in
 * catalog order, stable first), and per module the top-level payload fields that differ,
 * with their values before and after. Values past the limits are summarized by counts
 * (FieldSummary), so the answer stays bounded whatever the histories hold. Pure.
 */
export function diffStates(before: PatientState, after: PatientState, limits: Partial<DiffLimits> = {}): ModuleDiff[] {
  const lim = { ...DEFAULTS, ...limits };
  let shown = 0;
  const out: ModuleDiff[] = [];
  for (const key of [...STABLE_MODULES, ...EVENT_MODULES] as ModuleKey[]) {
    const a = moduleEntry(before, key);
    const b = moduleEntry(after, key);
    if (!a && !b) continue;
    const pa = (a?.payload ?? {}) as Record<string, unknown>;
    const pb = (b?.payload ?? {}) as Record<string, unknown>;
    const fields: FieldChange[] = [];
    for (const field of [...new Set([...Object.keys(pa), ...Object.keys(pb)])].sort()) {
      const ta = canonicalJson(pa[field]);
      const tb = canonicalJson(pb[field]);
      if (ta === tb) continue;
      const whole = ta.length <= lim.valueChars && tb.length <= lim.valueChars && shown + ta.length + tb.length <= lim.totalChars;
      if (whole) shown += ta.length + tb.length;
      fields.push(whole
        ? { field, before: pa[field] ?? null, after: pb[field] ?? null, summary: null }
        : { field, before: null, after: null, summary: summarize(pa[field], pb[field]) });
    }
    if (fields.length === 0 && a && b) continue;
    out.push({ module_type: key, kind: MODELS[key].kind, op: !a ? "created" : !b ? "removed" : "updated", updated_at: { before: a?.updated_at ?? null, after: b?.updated_at ?? null }, fields });
  }
  return out;
}

import type { Bundle, BundleEntry, CodeableConcept, Observation } from "@medplum/fhirtypes";
import { stableUuid, type Mapped, type OutboundInput } from "./lib.js";
import { provenances } from "./provenance.js";
import { summaryResources, type SectionKey } from "./summary.js";
import { utcMs } from "../../catalog/calendar.js";

/** The resource types a patient's state can be searched for, and the summary sections that hold them. */
export const SEARCH_TYPES = {
  Observation: ["results", "vital_signs"],
  Condition: ["problems"],
  AllergyIntolerance: ["allergies"],
  MedicationStatement: ["medications"],
  Immunization: ["immunizations"],
  Procedure: ["procedures"],
} as const satisfies Record<string, readonly SectionKey[]>;
export type SearchType = keyof typeof SEARCH_TYPES;

export const isSearchType = (t: string): t is SearchType => Object.hasOwn(SEARCH_TYPES, t);

/** A token as FHIR search writes one: `system|code`, `|code` (no system), `system|` (any code of it), `code` (any system). */
interface Token {
  system?: string | null;
  code?: string;
}

/** A date bound: the prefix and the instants [lo, hi) the value's precision spans. */
interface DateBound {
  prefix: "eq" | "ne" | "gt" | "lt" | "ge" | "le";
  lo: number;
  hi: number;
}

/** Observation search parameters, parsed. Each repeated parameter must hold (AND); each comma list is any of (OR). */
export interface ObservationFilter {
  code: Token[][];
  category: Token[][];
  date: DateBound[];
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; param: string; value: string; message: string };

function tokenOf(s: string): Token {
  const bar = s.indexOf("|");
  if (bar < 0) return { code: s };
  const system = s.slice(0, bar);
  const code = s.slice(bar + 1);
  return { system: system === "" ? null : system, ...(code !== "" ? { code } : {}) };
}

const DATE = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?)?)?$/;

/**
 * The instants a FHIR date or dateTime spans by its precision: 2026 is the whole year,
 * 2026-03-01 the day, a time the minute or second (UTC for dates without a time).
 */
export function dateRange(v: string): { lo: number; hi: number } | undefined {
  const m = DATE.exec(v);
  if (!m) return undefined;
  const [, y, mo, d, hh, mi, ss, frac, zone] = m;
  if (hh !== undefined) {
    const lo = Date.parse(`${y}-${mo}-${d}T${hh}:${mi}:${ss ?? "00"}${frac ?? ""}${zone}`);
    if (Number.isNaN(lo)) return undefined;
    return { lo, hi: lo + (frac ? 1 : ss ? 1000 : 60_000) };
  }
  const lo = utcMs(Number(y), mo ? Number(mo) - 1 : 0, d ? Number(d) : 1);
  const hi = d ? utcMs(Number(y), Number(mo) - 1, Number(d) + 1) : mo ? utcMs(Number(y), Number(mo), 1) : utcMs(Number(y) + 1, 0, 1);
  if (Number.isNaN(lo) || (mo && (Number(mo) < 1 || Number(mo) > 12)) || (d && new Date(lo).getUTCDate() !== Number(d))) return undefined;
  return { lo, hi };
}

const list = (v: string | readonly string[] | undefined): string[] => (v === undefined ? [] : typeof v === "string" ? [v] : [...v]);

/** `code`, `category` and `date` of an Observation search, or the parameter that is wrong and why. */
export function parseObservationQuery(q: { code?: string | readonly string[]; category?: string | readonly string[]; date?: string | readonly string[] }): Parsed<ObservationFilter> {
  const date: DateBound[] = [];
  for (const d of list(q.date)) {
    const m = /^(eq|ne|gt|lt|ge|le)?([\s\S]*)$/.exec(d)!;
    const r = dateRange(m[2]!);
    if (!r) {
      return { ok: false, param: "date", value: d, message: "must be a FHIR date or dateTime (2026-03-01, 2026-03, 2026-03-01T09:30:00Z) with an optional prefix eq, ne, gt, lt, ge or le" };
    }
    date.push({ prefix: (m[1] ?? "eq") as DateBound["prefix"], ...r });
  }
  const tokens = (v: string | readonly string[] | undefined) => list(v).map((s) => s.split(",").filter(Boolean).map(tokenOf)).filter((t) => t.length > 0);
  return { ok: true, value: { code: tokens(q.code), category: tokens(q.category), date } };
}

function matchesToken(cc: CodeableConcept | undefined, t: Token): boolean {
  return (cc?.coding ?? []).some((c) =>
    (t.system === undefined || (t.system === null ? c.system === undefined : c.system === t.system)) && (t.code === undefined || c.code === t.code));
}

/** FHIR's date comparison of a target range [s, e) with a search bound. */
function matchesDate(s: number, e: number, b: DateBound): boolean {
  switch (b.prefix) {
    case "eq": return s >= b.lo && e <= b.hi;
    case "ne": return !(s >= b.lo && e <= b.hi);
    case "gt": return e > b.hi;
    case "lt": return s < b.lo;
    case "ge": return e > b.lo;
    case "le": return s < b.hi;
    default: {
      const never: never = b.prefix;
      return never;
    }
  }
}

export function matchesObservation(o: Observation, f: ObservationFilter): boolean {
  if (!f.code.every((any) => any.some((t) => matchesToken(o.code, t)))) return false;
  if (!f.category.every((any) => any.some((t) => (o.category ?? []).some((c) => matchesToken(c, t))))) return false;
  if (f.date.length === 0) return true;
  const r = o.effectiveDateTime ? dateRange(o.effectiveDateTime) : undefined;
  if (!r) return false;
  return f.date.every((b) => matchesDate(r.lo, r.hi, b));
}

export interface SearchOptions {
  /** Observation parameters (other types take none). */
  observation?: ObservationFilter;
  /** `_revinclude=Provenance:target`: each match's Provenance, with search mode include. */
  provenance?: boolean;
}

/**
 * A searchset Bundle of the patient's resources of one type, as the summary maps them (same
 * ids and fullUrls), filtered for Observations by code, category and date.
 */
export function searchBundle(input: OutboundInput, type: SearchType, o: SearchOptions = {}): Bundle {
  const { sections } = summaryResources(input);
  let matches: Mapped[] = SEARCH_TYPES[type].flatMap((k) => sections[k]);
  const f = o.observation;
  if (type === "Observation" && f) matches = matches.filter((m) => matchesObservation(m.resource as Observation, f));
  const entry: BundleEntry[] = matches.map((m) => ({ fullUrl: m.fullUrl, resource: m.resource, search: { mode: "match" } }));
  if (o.provenance) for (const p of provenances(input.patient.id, matches)) entry.push({ fullUrl: p.fullUrl, resource: p.resource, search: { mode: "include" } });
  return { resourceType: "Bundle", id: stableUuid(input.patient.id, "searchset", type, ...matches.map((m) => m.fullUrl)), type: "searchset", total: matches.length, entry };
}

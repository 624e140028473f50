import { nestedDeeperThan } from "../../catalog/json-shape.js";
import type { Static } from "@sinclair/typebox";
import { AppError, fieldIssue } from "../errors.js";
import { newId } from "../ids.js";
import type { PatientCreateSchema } from "./patient-schemas.js";
import type { ExternalIdentifier, Patient } from "./patients.js";
import { calendarDayMs } from "../../catalog/calendar.js";

/** Per zone name: its spelling in the time zone database's case (see canonicalTimeZone), or null when no zone has that name. */
const zoneCache = new Map<string, string | null>();

function zoneInfo(tz: string): string | null {
  let out = zoneCache.get(tz);
  if (out === undefined) {
    try {
      const resolved = new Intl.DateTimeFormat("en-US", { timeZone: tz }).resolvedOptions().timeZone;
      out = resolved.toLowerCase() === tz.toLowerCase() ? resolved : tz;
    } catch {
      out = null;
    }
    if (zoneCache.size < 10_000) zoneCache.set(tz, out);
  }
  return out;
}

export function isTimeZone(tz: string): boolean {
  return zoneInfo(tz) !== null;
}

/**
 * A zone in the case the time zone database spells it ("utc" → "UTC", "europe/paris" →
 * "Europe/Paris"). Only the case changes: ICU would also turn links into its own ids
 * (Asia/Kolkata into Asia/Calcutta, EST into America/Panama), which a client would not
 * recognise as what it sent. A name that is no zone stays as it is.
 */
export function canonicalTimeZone(tz: string): string {
  return zoneInfo(tz) ?? tz;
}

/** Most bytes a patient's metadata may take as JSON: the record must fit one JetStream KV message (1 MB). */
export const MAX_METADATA_BYTES = 256 * 1024;

/** A calendar date (YYYY-MM-DD, then optionally a time): 1990-02-30 is no date of birth. */
export function isCalendarDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](.*))?$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (calendarDayMs(y, mo, d) === undefined) return false;
  return m[4] === undefined || !Number.isNaN(Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}`));
}

/**
 * What the schema cannot say about a patient's fields (create, update, a job's patient
 * row): a known IANA zone, a real date of birth, metadata that fits the record. The
 * first problem, or null.
 */
export function patientFieldProblem(input: { timezone?: string | null; date_of_birth?: string | null; metadata?: unknown }): { field: string; message: string; value: unknown } | null {
  const tz = input.timezone;
  if (tz !== undefined && tz !== null && !isTimeZone(tz)) return { field: "timezone", message: `unknown timezone "${tz}": use an IANA zone name such as Europe/Paris`, value: tz };
  const dob = input.date_of_birth;
  if (typeof dob === "string" && !isCalendarDate(dob)) return { field: "date_of_birth", message: `"${dob}" is not a calendar date: use YYYY-MM-DD (an ISO 8601 time may follow)`, value: dob };
  // A day later than today anywhere on Earth (UTC+14) is no birth date yet.
  if (typeof dob === "string" && dob.slice(0, 10) > new Date(Date.now() + 14 * 3_600_000).toISOString().slice(0, 10)) {
    return { field: "date_of_birth", message: `"${dob}" is in the future`, value: dob };
  }
  if (input.metadata !== undefined) {
    // Measured before serializing: JSON.stringify recurses, and a few thousand levels
    // overflow the stack (a 500 instead of a 422).
    if (nestedDeeperThan(input.metadata, MAX_METADATA_DEPTH)) {
      return { field: "metadata", message: `metadata nests deeper than ${MAX_METADATA_DEPTH} levels`, value: "(too deep)" };
    }
    const bytes = Buffer.byteLength(JSON.stringify(input.metadata));
    if (bytes > MAX_METADATA_BYTES) return { field: "metadata", message: `metadata takes ${bytes} bytes as JSON; at most ${MAX_METADATA_BYTES}`, value: `(${bytes} bytes)` };
  }
  return null;
}

/** Deepest nesting of objects and arrays a patient's metadata may have. */
export const MAX_METADATA_DEPTH = 32;

/** Throws the spec's 422 for the first patientFieldProblem, located under `location`. */
export function assertPatientFields(input: Parameters<typeof patientFieldProblem>[0], location: (string | number)[]): void {
  const p = patientFieldProblem(input);
  if (p) throw new AppError("validation", p.message, [fieldIssue([...location, p.field], p.message, p.value)]);
}

/** One string per (system, value): two identifiers are the same exactly when their keys are. */
export const identifierKey = (e: { system: string; value: string }): string => `${e.system}\u0000${e.value}`;

/** An identifier as a body may spell it: a null integration_id is none. */
export type IdentifierInput = { system: string; value: string; integration_id?: string | null };

/** The stored form: integration_id only when there is one. */
export function cleanIdentifier(e: IdentifierInput): ExternalIdentifier {
  return typeof e.integration_id === "string" ? { system: e.system, value: e.value, integration_id: e.integration_id } : { system: e.system, value: e.value };
}

/** Drops repeated (system, value) pairs, keeping the first. */
export function uniqueIdentifiers(ids: IdentifierInput[]): ExternalIdentifier[] {
  const seen = new Set<string>();
  const out: ExternalIdentifier[] = [];
  for (const e of ids) {
    const k = identifierKey(e);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(cleanIdentifier(e));
  }
  return out;
}

/** Names identifiers to remove: those equal to every field given (null is not given). */
export interface IdentifierMatcher {
  system?: string | null;
  value?: string | null;
  integration_id?: string | null;
}

/** The fields a matcher gives, without the nulls. */
export function cleanMatcher(m: IdentifierMatcher): IdentifierMatcher {
  const out: IdentifierMatcher = {};
  if (typeof m.system === "string") out.system = m.system;
  if (typeof m.value === "string") out.value = m.value;
  if (typeof m.integration_id === "string") out.integration_id = m.integration_id;
  return out;
}

/** Why a matcher cannot be used, or null: it must name something, and a value only means something within its system. */
export function matcherProblem(m: IdentifierMatcher): string | null {
  const c = cleanMatcher(m);
  if (c.system === undefined && c.value === undefined && c.integration_id === undefined) return "a matcher needs system, system and value, or integration_id";
  if (c.value !== undefined && c.system === undefined) return "value needs system: a value only identifies a patient within its system";
  return null;
}

export function matchesIdentifier(m: IdentifierMatcher, e: ExternalIdentifier): boolean {
  const c = cleanMatcher(m);
  return (c.system === undefined || c.system === e.system) && (c.value === undefined || c.value === e.value) && (c.integration_id === undefined || c.integration_id === e.integration_id);
}

export function newPatient(input: Static<typeof PatientCreateSchema>, scope: { organization_id: string; project_id: string }, now: string): Patient {
  return {
    id: newId("pat"),
    organization_id: scope.organization_id,
    project_id: scope.project_id,
    first_name: input.first_name ?? null,
    last_name: input.last_name ?? null,
    email: input.email ?? null,
    phone_number: input.phone_number ?? null,
    date_of_birth: input.date_of_birth ?? null,
    sex: input.sex ?? null,
    primary_disease_site: input.primary_disease_site ?? null,
    disease_stage: input.disease_stage ?? null,
    timezone: canonicalTimeZone(input.timezone ?? "UTC"),
    status: "active",
    external_identifiers: uniqueIdentifiers(input.external_identifiers ?? []),
    metadata: input.metadata ?? {},
    created_at: now,
    updated_at: now,
  };
}

/** The contract's Patient: tenancy fields stay inside the service. */
export function publicPatient(p: Patient) {
  return {
    id: p.id,
    first_name: p.first_name,
    last_name: p.last_name,
    email: p.email,
    phone_number: p.phone_number,
    date_of_birth: p.date_of_birth,
    sex: p.sex,
    primary_disease_site: p.primary_disease_site ?? null,
    disease_stage: p.disease_stage ?? null,
    timezone: p.timezone,
    status: p.status,
    external_identifiers: p.external_identifiers,
    metadata: p.metadata,
    created_at: p.created_at,
  };
}

import type { Static } from "@sinclair/typebox";
import { AppError, fieldIssue } from "../errors.js";
import { newId } from "../ids.js";
import type { PatientCreateSchema } from "../http/routes/patients/schemas.js";
import type { ExternalIdentifier, Patient } from "./patients.js";

const zoneCache = new Map<string, boolean>();

export function isTimeZone(tz: string): boolean {
  let ok = zoneCache.get(tz);
  if (ok === undefined) {
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: tz });
      ok = true;
    } catch {
      ok = false;
    }
    if (zoneCache.size < 10_000) zoneCache.set(tz, ok);
  }
  return ok;
}

export function assertTimeZone(tz: string | undefined, location: (string | number)[]): void {
  if (tz !== undefined && !isTimeZone(tz)) {
    throw new AppError("validation", `unknown timezone "${tz}": use an IANA zone name such as Europe/Paris`, [
      fieldIssue(location, "must be an IANA time zone name", tz),
    ]);
  }
}

/** Drops repeated (system, value) pairs, keeping the first. */
export function uniqueIdentifiers(ids: ExternalIdentifier[]): ExternalIdentifier[] {
  const seen = new Set<string>();
  return ids.filter((e) => {
    const k = `${e.system}\u0000${e.value}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
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
    timezone: input.timezone ?? "UTC",
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
    timezone: p.timezone,
    status: p.status,
    external_identifiers: p.external_identifiers,
    metadata: p.metadata,
    created_at: p.created_at,
  };
}

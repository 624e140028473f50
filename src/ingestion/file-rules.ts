import type { Static } from "@sinclair/typebox";
import { PatientCreateSchema, patientSchemaProblem } from "../control/patient-schemas.js";
import { patientFieldProblem, uniqueIdentifiers } from "../control/patient-records.js";
import type { ExternalIdentifier } from "../control/patients.js";
import { isObject, validateEnvelope, type EnvelopeResult } from "../logs/envelope.js";
import { OVERFLOWING_NUMBER, overflowingNumberPath } from "../../catalog/json-shape.js";

/**
 * The rules of a historical JSONL file, shared by the job's VALIDATING stage and the
 * offline `validateJsonlFile` (the CLI's `pss validate`), so both judge a line alike.
 *
 * Each line is `{"type":"patient"|"log","data":{...}}`. Patient rows follow the rules of
 * POST /v1/patients; a log row is a log envelope (`event_type` or `log_type`) whose
 * `patient_id` is a service id, the value of an external identifier, or `system|value`.
 */

export type PatientInput = Static<typeof PatientCreateSchema>;

export type ParsedLine =
  | { kind: "blank" }
  | { kind: "patient"; data: Record<string, unknown> }
  | { kind: "log"; data: Record<string, unknown> }
  | { kind: "error"; code: string; message: string };

/** Codes of line errors that only skip the line; every other code fails the job. */
export const SKIPPABLE_CODES: ReadonlySet<string> = new Set(["validation_error", "unknown_log_type"]);

export function parseLine(text: string): ParsedLine {
  if (text.trim() === "") return { kind: "blank" };
  let row: unknown;
  try {
    row = JSON.parse(text);
  } catch (err) {
    return { kind: "error", code: "invalid_json", message: `not valid JSON: ${(err as Error).message}` };
  }
  const overflow = overflowingNumberPath(text, row);
  if (overflow) return { kind: "error", code: "invalid_json", message: `${overflow.join(".")} is ${OVERFLOWING_NUMBER}` };
  if (!isObject(row) || !isObject(row.data)) return { kind: "error", code: "invalid_row", message: 'a row must be an object {"type","data"} with data an object' };
  if (row.type === "patient") return { kind: "patient", data: row.data };
  if (row.type === "log") return { kind: "log", data: row.data };
  return { kind: "error", code: "unknown_row_type", message: `unknown row type ${JSON.stringify(row.type)}: use "patient" or "log"` };
}

/** A patient row checked as POST /v1/patients checks a body. */
export function checkPatient(data: Record<string, unknown>): { ok: true; input: PatientInput; identifiers: ExternalIdentifier[] } | { ok: false; message: string } {
  const wrong = patientSchemaProblem(data);
  if (wrong) return { ok: false, message: wrong.message };
  const input = data as PatientInput;
  const problem = patientFieldProblem(input);
  if (problem) return { ok: false, message: `${problem.field}: ${problem.message}` };
  return { ok: true, input, identifiers: uniqueIdentifiers(input.external_identifiers ?? []) };
}

/** A placeholder that passes the envelope's patient id rule while the real id is not known yet. */
export const PLACEHOLDER_PATIENT_ID = "pat_placeholder";

/** A log row checked as POST /v1/logs/batch checks a log, for the patient it was resolved to. */
export function checkLog(data: Record<string, unknown>, patientId: string | undefined): EnvelopeResult {
  // Without a reference the envelope reports the missing patient_id itself.
  return validateEnvelope(withPayload(patientId === undefined ? data : { ...data, patient_id: patientId }), []);
}

/** A log row without `payload` has an empty one: the hosted product's SDK leaves an empty payload out of a record. */
export function withPayload(data: Record<string, unknown>): Record<string, unknown> {
  return data.payload === undefined ? { ...data, payload: {} } : data;
}

export const AMBIGUOUS = -1;

/**
 * The patients a file declares, by the references a log may use: `system|value` and the
 * bare `value` (ambiguous once two rows share a value under different systems).
 */
export class PatientIndex {
  private readonly exact = new Map<string, number>();
  private readonly values = new Map<string, number>();
  private readonly byLine = new Map<number, ExternalIdentifier[]>();

  /** Records a patient row; returns the identifier another row already declared, if any. */
  declare(line: number, identifiers: ExternalIdentifier[]): ExternalIdentifier | undefined {
    for (const e of identifiers) if (this.exact.has(`${e.system}|${e.value}`)) return e;
    if (identifiers.length > 0) this.byLine.set(line, identifiers);
    for (const e of identifiers) {
      this.exact.set(`${e.system}|${e.value}`, line);
      const seen = this.values.get(e.value);
      this.values.set(e.value, seen === undefined || seen === line ? line : AMBIGUOUS);
    }
    return undefined;
  }

  /** The identifiers the row on `line` declares. */
  identifiersOf(line: number): readonly ExternalIdentifier[] {
    return this.byLine.get(line) ?? [];
  }

  /** The declaring row's line, AMBIGUOUS, or undefined when the file does not declare it. */
  lookup(ref: string): number | undefined {
    const bar = ref.indexOf("|");
    if (bar > 0) {
      const hit = this.exact.get(ref);
      if (hit !== undefined) return hit;
    }
    return this.values.get(ref);
  }
}

/** Splits `system|value` at the first bar; null for a bare value. */
export function splitRef(ref: string): ExternalIdentifier | null {
  const bar = ref.indexOf("|");
  return bar > 0 && bar < ref.length - 1 ? { system: ref.slice(0, bar), value: ref.slice(bar + 1) } : null;
}

/** An existing patient holding an identifier value, and under which system. */
export interface Holder {
  system: string;
  patient_id: string;
}

/** What a reference names: the patient id, "ambiguous" (several patients), or null when nothing matches. */
export type Resolved = string | null;

/** Existing patients a reference may name (the file does not declare it). */
export interface ExistingPatients {
  /** The patient id, "ambiguous", or null when nothing matches. May answer synchronously. */
  resolve(ref: string): Resolved | Promise<Resolved>;
  /**
   * The existing patients holding `value`, under which system each (none known: empty).
   * A bare value the file declares may also name them; omitted offline.
   */
  holdersOf?(value: string): readonly Holder[] | Promise<readonly Holder[]>;
}

export type LineOutcome =
  | { kind: "blank" }
  | { kind: "patient"; data: Record<string, unknown> }
  /** target: the line declaring the log's patient, or an existing patient's id. */
  | { kind: "log"; log_type: string; target: number | string }
  /** target (a skipped log's patient, when its line names one): the preview counts the patient's invalid lines. */
  | { kind: "error"; code: string; message: string; structural: boolean; target?: number | string };

const fail = (code: string, message: string): LineOutcome => ({ kind: "error", code, message, structural: !SKIPPABLE_CODES.has(code) });

/**
 * Judges a file line by line, in order (patients must be declared before the logs that
 * name them), counting rows and log types as it goes.
 */
export class FileChecker {
  readonly index = new PatientIndex();
  patients = 0;
  logs = 0;
  readonly byType: Record<string, number> = {};

  constructor(private readonly existing: ExistingPatients) {}

  check(text: string, line: number): LineOutcome | Promise<LineOutcome> {
    const row = parseLine(text);
    if (row.kind === "blank") return row;
    if (row.kind === "error") return fail(row.code, row.message);
    if (row.kind === "patient") {
      this.patients++;
      const p = checkPatient(row.data);
      if (!p.ok) return fail("invalid_patient", p.message);
      const dup = this.index.declare(line, p.identifiers);
      if (dup) return fail("duplicate_patient", `external identifier ${dup.system}|${dup.value} is declared by an earlier patient row`);
      const patient: LineOutcome = { kind: "patient", data: row.data };
      return p.identifiers.length < 2 ? patient : this.oneHolder(p.identifiers, patient);
    }
    this.logs++;
    const ref = row.data.patient_id;
    if (typeof ref !== "string" || ref === "") return this.logOutcome(row.data, undefined, 0);
    const declared = this.index.lookup(ref);
    if (declared === AMBIGUOUS) return fail("ambiguous_patient", `patient_id "${ref}" matches several patients of the file; write it as system|value`);
    if (declared !== undefined) {
      // A bare value an existing patient also holds names that patient too, unless the
      // declaring row is that very patient (its identifiers lead to it): then only
      // system|value says which.
      const holders = splitRef(ref) === null ? this.existing.holdersOf?.(ref) : undefined;
      if (holders === undefined) return this.logOutcome(row.data, PLACEHOLDER_PATIENT_ID, declared);
      return holders instanceof Promise ? holders.then((h) => this.afterClashCheck(row.data, ref, declared, h)) : this.afterClashCheck(row.data, ref, declared, holders);
    }
    const found = this.existing.resolve(ref);
    return found instanceof Promise ? found.then((f) => this.afterLookup(row.data, ref, f)) : this.afterLookup(row.data, ref, found);
  }

  /**
   * A row whose identifiers existing patients hold reuses that patient; identifiers held
   * by two different patients name no one (POST /v1/patients answers 409 for the same),
   * and reusing either would put the row's logs on the wrong patient.
   */
  private oneHolder(identifiers: readonly ExternalIdentifier[], patient: LineOutcome): LineOutcome | Promise<LineOutcome> {
    const found = identifiers.map((e) => this.existing.resolve(`${e.system}|${e.value}`));
    const judge = (ids: readonly Resolved[]): LineOutcome => {
      const held = identifiers.flatMap((e, i) => (ids[i] && ids[i] !== "ambiguous" ? [`${e.system}|${e.value} (${ids[i]})`] : []));
      const holders = new Set(ids.filter((x) => x && x !== "ambiguous"));
      return holders.size > 1 ? fail("ambiguous_patient", `the row's external identifiers belong to different existing patients: ${held.join(", ")}`) : patient;
    };
    return found.some((f) => f instanceof Promise) ? Promise.all(found.map((f) => Promise.resolve(f))).then(judge) : judge(found as Resolved[]);
  }

  private afterClashCheck(data: Record<string, unknown>, ref: string, declared: number, holders: readonly Holder[]): LineOutcome | Promise<LineOutcome> {
    // Most files: nobody else holds the value, and the line is judged at once.
    return holders.length === 0 ? this.logOutcome(data, PLACEHOLDER_PATIENT_ID, declared) : this.clashCheck(data, ref, declared, holders);
  }

  private async clashCheck(data: Record<string, unknown>, ref: string, declared: number, holders: readonly Holder[]): Promise<LineOutcome> {
    if (!(await this.heldOnlyByItself(declared, holders))) {
      return fail("ambiguous_patient", `patient_id "${ref}" matches a patient of the file and an existing patient; write it as system|value`);
    }
    return this.logOutcome(data, PLACEHOLDER_PATIENT_ID, declared);
  }

  /** Whether the existing holders of a bare value are all the declaring row itself (it reuses one when an identifier of it is held). */
  private async heldOnlyByItself(declared: number, holders: readonly Holder[]): Promise<boolean> {
    const itself = new Set<string>();
    for (const e of this.index.identifiersOf(declared)) {
      const h = await this.existing.holdersOf!(e.value);
      for (const x of h) if (x.system === e.system) itself.add(x.patient_id);
    }
    return holders.every((h) => itself.has(h.patient_id));
  }

  /**
   * The patient a reference names, found as a log line's patient_id is but without
   * counting a log: a FHIR resource skipped at conversion is counted for it. Undefined
   * when the reference names no patient, or several.
   */
  async targetOf(ref: string): Promise<number | string | undefined> {
    const declared = this.index.lookup(ref);
    if (declared === AMBIGUOUS) return undefined;
    if (declared !== undefined) {
      const holders = splitRef(ref) === null ? await this.existing.holdersOf?.(ref) : undefined;
      return holders === undefined || holders.length === 0 || (await this.heldOnlyByItself(declared, holders)) ? declared : undefined;
    }
    const found = await this.existing.resolve(ref);
    return found === null || found === "ambiguous" ? undefined : found;
  }

  private afterLookup(data: Record<string, unknown>, ref: string, found: Resolved): LineOutcome {
    if (found === "ambiguous") return fail("ambiguous_patient", `patient_id "${ref}" matches several existing patients; write it as system|value`);
    if (found === null) return fail("unknown_patient", `patient_id "${ref}" names no patient declared above this line nor an existing patient`);
    return this.logOutcome(data, found, found);
  }

  private logOutcome(data: Record<string, unknown>, patientId: string | undefined, target: number | string): LineOutcome {
    const r = checkLog(data, patientId);
    if (!r.ok) {
      // Only a log's own payload (or type) is skippable: a log without a patient or a time,
      // or whose payload is not an object, is a broken row, and fails the file as the
      // contract's line errors do (a missing payload is an empty one: withPayload).
      const where = (d: { location?: (string | number)[] }) => d.location ?? [];
      const envelope = r.code === "validation_error" ? r.details.find((d) => where(d)[0] !== "payload" || where(d).length < 2) : undefined;
      if (envelope === undefined) return { ...fail(r.code, r.message), ...(patientId !== undefined ? { target } : {}) };
      const code = where(envelope)[0] === "patient_id" ? "unknown_patient" : "invalid_row";
      // A row names its type as event_type (the contract's) or log_type (the batch route's).
      const field = envelope.field === "log_type" ? "event_type (or log_type)" : envelope.field ?? "log";
      return { kind: "error", code, message: `${field} ${envelope.message}`, structural: true };
    }
    this.byType[r.log.log_type] = (this.byType[r.log.log_type] ?? 0) + 1;
    return { kind: "log", log_type: r.log.log_type, target };
  }
}

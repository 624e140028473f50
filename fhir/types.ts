import type { Resource } from "@medplum/fhirtypes";
import type { LogType } from "../catalog/log-types.js";

export type { Resource } from "@medplum/fhirtypes";

/**
 * One log a FHIR resource maps to, before it has a patient, a key, a trace or metadata:
 * the dispatcher (inbound/index.ts) adds those the same way for every resource type.
 */
export interface DerivedLog {
  log_type: LogType;
  /** ISO 8601 with an offset: the resource's clinical date. Left out, the time the log is accepted. */
  timestamp?: string;
  payload: Record<string, unknown>;
}

/** Where in the resource a problem is (["code","coding",0]) and what to change. */
export interface MapIssue {
  path: (string | number)[];
  message: string;
}

/** What a mapper answers: the logs, or why the resource cannot become any. */
export type MapOutcome = { ok: true; logs: DerivedLog[] } | { ok: false; issues: MapIssue[] };

/** What a mapper may look up beyond the resource itself. */
export interface MapContext {
  /**
   * The resource a reference names: a contained resource (`#id`), another entry of the
   * same Bundle (`urn:uuid:…` or `Type/id`), nothing else (no network lookups).
   */
  resolve(reference: string): Resource | undefined;
}

/** Maps one resource type; `R` is the resource type it is registered for. */
export type Mapper<R extends Resource = Resource> = (resource: R, ctx: MapContext) => MapOutcome;

export const unmappable = (path: (string | number)[], message: string): MapOutcome => ({ ok: false, issues: [{ path, message }] });

import type { Bundle } from "@medplum/fhirtypes";
import { parseObservationQuery, searchBundle, summaryBundle, type OutboundInput, type SearchType } from "../../fhir/outbound/index.js";
import type { Horizon } from "../../readmodels/as-of.js";
import type { ModuleKey } from "../../readmodels/module.js";
import type { Principal } from "../auth/scopes.js";
import { AppError, fieldIssue } from "../errors.js";
import type { HorizonReader } from "./as-of-read.js";
import type { Snapshot, StateReader } from "./state-reader.js";

/** The modules the FHIR reads map (fhir/outbound): a plain read loads only these. */
export const FHIR_MODULES: readonly ModuleKey[] = [
  "demographics", "condition_diagnosis", "allergies", "medications", "immunizations", "procedures", "lab_results", "vitals",
];

export interface FhirReadDeps {
  reader: StateReader;
  horizon: HorizonReader;
}

/**
 * The patient record and its state, plain (cached, read-your-writes) or at a horizon
 * (folded afresh from the log), authorized as every state read is.
 */
async function inputOf(d: FhirReadDeps, principal: Principal, patientId: string, h: Horizon | undefined): Promise<{ input: OutboundInput; snap: Snapshot }> {
  const patient = await d.reader.authorize(principal, patientId);
  const snap = await d.horizon.orPlain(principal, patientId, h, () => d.reader.snapshot(principal, patientId, FHIR_MODULES));
  return { input: { state: snap.stored.state, patient }, snap };
}

/** GET /v1/state/{pid}/fhir/summary: the patient summary document, timestamped with the time of the read. */
export async function readFhirSummary(d: FhirReadDeps, principal: Principal, patientId: string, h: Horizon | undefined): Promise<{ bundle: Bundle; snap: Snapshot }> {
  const { input, snap } = await inputOf(d, principal, patientId, h);
  return { bundle: summaryBundle(input, { now: d.reader.now() }), snap };
}

export interface FhirSearchQuery {
  code?: string | string[];
  category?: string | string[];
  date?: string | string[];
  _revinclude?: string;
}

/**
 * GET /v1/state/{pid}/fhir/{type}: a searchset of one resource type; Observation takes
 * code, category and date. A bad parameter is 422 naming it, before the state is read.
 */
export async function readFhirSearch(
  d: FhirReadDeps, principal: Principal, patientId: string, type: SearchType, q: FhirSearchQuery, h: Horizon | undefined,
): Promise<{ bundle: Bundle; snap: Snapshot }> {
  const parsed = type === "Observation" ? parseObservationQuery(q) : undefined;
  if (parsed && !parsed.ok) throw new AppError("validation", `${parsed.param} ${parsed.message}`, [fieldIssue(["query", parsed.param], parsed.message, parsed.value)]);
  const { input, snap } = await inputOf(d, principal, patientId, h);
  const observation = parsed?.ok ? parsed.value : undefined;
  return { bundle: searchBundle(input, type, { ...(observation ? { observation } : {}), provenance: q._revinclude === "Provenance:target" }), snap };
}

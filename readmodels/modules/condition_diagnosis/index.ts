import type { LogType } from "../../../catalog/log-types.js";
import type { LogRecord } from "../../log-record.js";
import { itemExtensions } from "../../lib/extensions.js";
import type { Identity } from "../../lib/identity.js";
import { applyLifecycle, type Lifecycle } from "../../lib/lifecycle.js";
import { HISTORY, insertSorted, last } from "../../lib/lists.js";
import { bool, objs, str, strs, type Obj } from "../../lib/payload.js";
import { withDoc, type ModuleState, type ReadModel } from "../../module.js";

export interface ConditionReport {
  timestamp: string;
  log_id: string;
  /** As reported; null when a later report did not restate it (the first report records the effective status, "active" by default). */
  status: string | null;
  stage: string | null;
}

export interface Condition extends Lifecycle<ConditionReport> {
  disease_type: string | null;
  snomed_code: string | null;
  icd10_codes: string[] | null;
  stage: string | null;
  /** The clinical_status: active | resolved | remission | inactive | entered_in_error. @default "active" */
  status: string;
  diagnosis_date: string | null;
  onset_date: string | null;
  recorded_at: string | null;
  /** At most one condition is primary: marking one clears the others. */
  is_primary: boolean | null;
}

export interface PhaseChange {
  timestamp: string;
  log_id: string;
  previous_phase: string | null;
  new_phase: string;
  effective_date: string | null;
  changed_by: string | null;
  source: unknown;
}

/** The treatment phase: `current` is the new_phase of the latest change by event time. */
export interface TreatmentPhase {
  current: string | null;
  effective_date: string | null;
  changed_by: string | null;
  updated_at: string | null;
  history: PhaseChange[];
}

export interface ConditionDiagnosisDoc {
  conditions: Condition[];
  treatment_phase: TreatmentPhase;
}

const FIELDS = [
  "disease_type", "snomed_code", "icd10_codes", "stage", "status", "diagnosis_date", "onset_date", "recorded_at",
  "is_primary",
] as const;

// ICD-10 lists are compared by their first code: the one a clinician lists first is the diagnosis.
const identityOf = (c: Pick<Condition, "snomed_code" | "icd10_codes" | "disease_type">): Identity => ({
  codes: [c.snomed_code, c.icd10_codes?.[0]],
  name: c.disease_type,
});

/** A payload carries one condition at top level, several in `conditions`, or both. */
function conditionItems(p: Obj): Obj[] {
  const top = str(p, "disease_type") ?? str(p, "snomed_code") ?? strs(p, "icd10_codes")?.[0];
  return [...(top !== undefined ? [p] : []), ...objs(p, "conditions")];
}

function applyCondition(s: ModuleState<ConditionDiagnosisDoc>, log: LogRecord): ModuleState<ConditionDiagnosisDoc> {
  let list: readonly Condition[] = s.doc.conditions;
  let clocks = s.clocks;
  for (const item of conditionItems(log.payload)) {
    const probe = {
      snomed_code: str(item, "snomed_code") ?? null,
      icd10_codes: strs(item, "icd10_codes") ?? null,
      disease_type: str(item, "disease_type") ?? null,
    };
    const status = str(item, "clinical_status");
    // The payload's extensions describe every condition it carries (the top-level one is the payload itself).
    const patch = { ...item, status, is_primary: bool(item, "is_primary") ?? bool(log.payload, "is_primary"), extensions: itemExtensions(log.payload, item) };
    ({ list, clocks } = applyLifecycle<Condition, ConditionReport>({
      list, clocks, ns: "conditions", log, item: patch, probe: identityOf(probe), identityOf, fields: FIELDS,
      blank: {
        ...probe, stage: null, status: "active", diagnosis_date: null, onset_date: null, recorded_at: null,
        is_primary: null,
      },
      history: { timestamp: log.timestamp, log_id: log.id, status: status ?? null, stage: str(item, "stage") ?? null },
      created: (h, e) => (h.status === null ? { ...h, status: e.status } : h),
    }));
    if (patch.is_primary === true) {
      const key = JSON.stringify(identityOf(probe));
      list = list.map((c) => (c.is_primary && JSON.stringify(identityOf(c)) !== key ? { ...c, is_primary: false } : c));
    }
  }
  return withDoc(s, list === s.doc.conditions ? s.doc : { ...s.doc, conditions: [...list] }, clocks);
}

function applyPhase(s: ModuleState<ConditionDiagnosisDoc>, log: LogRecord): ModuleState<ConditionDiagnosisDoc> {
  const p = log.payload;
  const new_phase = str(p, "new_phase");
  if (new_phase === undefined) return s;
  const change: PhaseChange = {
    timestamp: log.timestamp, log_id: log.id, previous_phase: str(p, "previous_phase") ?? null, new_phase,
    effective_date: str(p, "effective_date") ?? null, changed_by: str(p, "changed_by") ?? null, source: p.source ?? null,
  };
  const history = insertSorted(s.doc.treatment_phase.history, change, HISTORY);
  const latest = last(history) as PhaseChange;
  const treatment_phase: TreatmentPhase = {
    current: latest.new_phase, effective_date: latest.effective_date, changed_by: latest.changed_by,
    updated_at: latest.timestamp, history,
  };
  return withDoc(s, { ...s.doc, treatment_phase });
}

export const handles: readonly LogType[] = ["condition", "treatment_phase"];

export const conditionDiagnosis: ReadModel<"condition_diagnosis", ConditionDiagnosisDoc> = {
  key: "condition_diagnosis",
  kind: "stable",
  version: 3,
  handles,
  reads: [],
  initial: () => ({
    conditions: [],
    treatment_phase: { current: null, effective_date: null, changed_by: null, updated_at: null, history: [] },
  }),
  evolve: (s, log) => (log.log_type === "treatment_phase" ? applyPhase(s, log) : applyCondition(s, log)),
};

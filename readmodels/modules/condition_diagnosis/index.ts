import type { LogPayloads } from "../../../catalog/payloads.js";
import type { LogOf } from "../../log-record.js";
import { itemExtensions } from "../../lib/extensions.js";
import type { Identity } from "../../lib/identity.js";
import { applyLifecycle, type Lifecycle } from "../../lib/lifecycle.js";
import { HISTORY, insertSorted, last } from "../../lib/lists.js";
import { bool, items, text, texts, truth } from "../../lib/payload.js";
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

type ConditionItem = NonNullable<LogPayloads["condition"]["conditions"]>[number];

/** A payload carries one condition at top level, several in `conditions`, or both. */
function conditionItems(p: LogPayloads["condition"]): readonly ConditionItem[] {
  const top = text(p.disease_type) ?? text(p.snomed_code) ?? texts(p.icd10_codes)?.[0];
  const listed = items(p.conditions);
  return top === undefined ? listed : [p, ...listed];
}

function applyCondition(s: ModuleState<ConditionDiagnosisDoc>, log: LogOf<"condition">): ModuleState<ConditionDiagnosisDoc> {
  let list: readonly Condition[] = s.doc.conditions;
  let clocks = s.clocks;
  const p = log.payload;
  for (const item of conditionItems(p)) {
    const probe = {
      snomed_code: text(item.snomed_code) ?? null,
      icd10_codes: texts(item.icd10_codes) ?? null,
      disease_type: text(item.disease_type) ?? null,
    };
    const status = text(item.clinical_status);
    // A listed condition's own is_primary is not a catalog field, but wins over the payload's when sent.
    const is_primary = bool(item, "is_primary") ?? truth(p.is_primary);
    // The payload's extensions describe every condition it carries (the top-level one is the payload itself).
    const patch = { ...item, status, is_primary, extensions: itemExtensions(p, item) };
    ({ list, clocks } = applyLifecycle<Condition, ConditionReport>({
      list, clocks, ns: "conditions", log, item: patch, probe: identityOf(probe), identityOf, fields: FIELDS,
      blank: {
        ...probe, stage: null, status: "active", diagnosis_date: null, onset_date: null, recorded_at: null,
        is_primary: null,
      },
      history: { timestamp: log.timestamp, log_id: log.id, status: status ?? null, stage: text(item.stage) ?? null },
      created: (h, e) => (h.status === null ? { ...h, status: e.status } : h),
    }));
    if (patch.is_primary === true) {
      const key = JSON.stringify(identityOf(probe));
      list = list.map((c) => (c.is_primary && JSON.stringify(identityOf(c)) !== key ? { ...c, is_primary: false } : c));
    }
  }
  return withDoc(s, list === s.doc.conditions ? s.doc : { ...s.doc, conditions: [...list] }, clocks);
}

function applyPhase(s: ModuleState<ConditionDiagnosisDoc>, log: LogOf<"treatment_phase">): ModuleState<ConditionDiagnosisDoc> {
  const p = log.payload;
  const new_phase = text(p.new_phase);
  if (new_phase === undefined) return s;
  const change: PhaseChange = {
    timestamp: log.timestamp, log_id: log.id, previous_phase: text(p.previous_phase) ?? null, new_phase,
    effective_date: text(p.effective_date) ?? null, changed_by: text(p.changed_by) ?? null, source: p.source ?? null,
  };
  const history = insertSorted(s.doc.treatment_phase.history, change, HISTORY);
  const latest = last(history) as PhaseChange;
  const treatment_phase: TreatmentPhase = {
    current: latest.new_phase, effective_date: latest.effective_date, changed_by: latest.changed_by,
    updated_at: latest.timestamp, history,
  };
  return withDoc(s, { ...s.doc, treatment_phase });
}

export const handles = ["condition", "treatment_phase"] as const;

export const conditionDiagnosis: ReadModel<"condition_diagnosis", ConditionDiagnosisDoc, (typeof handles)[number]> = {
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

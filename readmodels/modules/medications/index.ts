import { clockAt, type Clocks } from "../../lib/clocks.js";
import { actionOf, applyEntry, type EntryMeta } from "../../lib/entities.js";
import { itemExtensions } from "../../lib/extensions.js";
import { findByIdentity, identityKey, type Identity } from "../../lib/identity.js";
import { items, normName, text } from "../../lib/payload.js";
import { cmpTime } from "../../lib/time.js";
import { withDoc, type ReadModel } from "../../module.js";
import type { LogPayloads } from "../../../catalog/payloads.js";

/** The contract's medication entry, plus ndc_code, therapeutic_class, extensions and sources. */
export interface Medication extends EntryMeta {
  medication_name: string | null;
  rxnorm_cui: string | null;
  dose: string | null;
  dose_unit: string | null;
  frequency: string | null;
  route: string | null;
  form: string | null;
  /** Daily times "HH:MM"; adherence is tracked against them. */
  schedule_times: string[] | null;
  /** Minutes either side of a scheduled time that count as on time. @default 60 */
  adherence_window_minutes: number | null;
  /** ISO 8601 date */
  start_date: string | null;
  prescribed_by: { name?: string; npi?: string } | null;
  ndc_code: string | null;
  therapeutic_class: string | null;
}

/** Current medication list; a deleted medication is no longer listed. */
export interface MedicationsDoc {
  medications: Medication[];
}

export const DEFAULT_ADHERENCE_WINDOW_MINUTES = 60;

const FIELDS = [
  "medication_name", "rxnorm_cui", "dose", "dose_unit", "frequency", "route", "form", "schedule_times",
  "adherence_window_minutes", "start_date", "prescribed_by", "ndc_code", "therapeutic_class",
] as const satisfies readonly (keyof LogPayloads["medication_list_update"]["medications"][number])[];

const identityOf = (m: Pick<Medication, "rxnorm_cui" | "medication_name">): Identity => ({
  codes: [m.rxnorm_cui],
  name: m.medication_name,
});
const keyOf = (m: Medication) => identityKey(identityOf(m));

/** The listed medication a dose or adverse event refers to: by RxNorm CUI, else normalized name. */
export function findMedication(
  doc: Readonly<MedicationsDoc> | undefined,
  ref: { rxnorm_cui?: string | null; medication_name?: string | null },
): Medication | undefined {
  if (!doc) return undefined;
  const i = findByIdentity(doc.medications, identityOf({ rxnorm_cui: ref.rxnorm_cui ?? null, medication_name: ref.medication_name ?? null }), identityOf);
  return i >= 0 ? doc.medications[i] : undefined;
}

/**
 * The log that last wrote any of `fields` of a listed medication (by the module's write
 * clocks, matched to its sources): what a change cites. Undefined when that log has left
 * the kept sources.
 */
export function setBy(clocks: Clocks, m: Medication, fields: readonly string[]): string | undefined {
  const times = fields.map((f) => clockAt(clocks, ["medications", keyOf(m), f])).filter((t): t is string => t !== undefined);
  if (times.length === 0) return undefined;
  const last = times.reduce((a, b) => (cmpTime(a, b) >= 0 ? a : b));
  // Two writes at one instant: the later source, as the later write won.
  return [...m.sources].reverse().find((s) => cmpTime(s.timestamp, last) === 0)?.log_id;
}

/**
 * The name a list item writes: none when it only names the entry it updates (the same
 * name, however cased or spaced: the listing's spelling stays), else the new name trimmed.
 */
function nameWrite(existing: Medication | undefined, name: string | null): string | undefined {
  if (name === null || (existing && normName(existing.medication_name) === normName(name))) return undefined;
  return name;
}

export const handles = ["medication_list_update"] as const;

export const medications: ReadModel<"medications", MedicationsDoc, "medication_list_update"> = {
  key: "medications",
  kind: "stable",
  version: 3,
  handles,
  reads: [],
  initial: () => ({ medications: [] }),
  evolve: (s, log) => {
    let list: readonly Medication[] = s.doc.medications;
    let clocks = s.clocks;
    for (const m of items(log.payload.medications)) {
      const rxnorm_cui = text(m.rxnorm_cui) ?? null;
      const medication_name = text(m.medication_name)?.trim() ?? null;
      if (rxnorm_cui === null && medication_name === null) continue; // nothing to identify it by
      const index = findByIdentity(list, identityOf({ rxnorm_cui, medication_name }), identityOf);
      ({ list, clocks } = applyEntry<Medication>({
        list,
        clocks,
        ns: "medications",
        index,
        keyOf,
        action: actionOf(m),
        // The payload's extensions describe every medication it lists.
        patch: { ...m, medication_name: nameWrite(index >= 0 ? list[index] : undefined, medication_name), extensions: itemExtensions(log.payload, m) },
        fields: FIELDS,
        blank: {
          medication_name, rxnorm_cui, dose: null, dose_unit: null, frequency: null, route: null, form: null,
          schedule_times: [], adherence_window_minutes: DEFAULT_ADHERENCE_WINDOW_MINUTES, start_date: null,
          prescribed_by: null, ndc_code: null, therapeutic_class: null,
        },
        log,
        source: log.payload.source,
      }));
    }
    return withDoc(s, list === s.doc.medications ? s.doc : { medications: [...list] }, clocks);
  },
};

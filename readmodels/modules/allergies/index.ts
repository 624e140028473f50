import { itemExtensions } from "../../lib/extensions.js";
import type { Identity } from "../../lib/identity.js";
import { applyLifecycle, type Lifecycle } from "../../lib/lifecycle.js";
import { items, text } from "../../lib/payload.js";
import { withDoc, type ReadModel } from "../../module.js";

export interface AllergyReport {
  timestamp: string;
  log_id: string;
  /** As reported; null when a later report did not restate it (the first report records the effective status, "active" by default). */
  status: string | null;
  criticality: string | null;
}

export interface Allergy extends Lifecycle<AllergyReport> {
  allergen: string | null;
  snomed_code: string | null;
  /** food | medication | environment | biologic | other */
  category: string | null;
  /** high | low | unable_to_assess */
  criticality: string | null;
  /** The clinical_status: active | inactive | resolved. @default "active" */
  status: string;
  reactions: string[] | null;
  recorded_date: string | null;
}

/** Allergies and intolerances, one per snomed_code else allergen; removed ones are not listed. */
export interface AllergiesDoc {
  allergies: Allergy[];
}

const identityOf = (a: Allergy): Identity => ({ codes: [a.snomed_code], name: a.allergen });

export const handles = ["allergy_intolerance"] as const;

export const allergies: ReadModel<"allergies", AllergiesDoc, "allergy_intolerance"> = {
  key: "allergies",
  kind: "stable",
  version: 3,
  handles,
  reads: [],
  initial: () => ({ allergies: [] }),
  evolve: (s, log) => {
    let list: readonly Allergy[] = s.doc.allergies;
    let clocks = s.clocks;
    for (const a of items(log.payload.allergies)) {
      const allergen = text(a.allergen) ?? null;
      const snomed_code = text(a.snomed_code) ?? null;
      if (!allergen && !snomed_code) continue;
      const status = text(a.clinical_status);
      ({ list, clocks } = applyLifecycle<Allergy, AllergyReport>({
        list, clocks, ns: "allergies", log,
        // The payload's extensions describe every allergy it lists.
        item: { ...a, status, extensions: itemExtensions(log.payload, a) },
        probe: { codes: [snomed_code], name: allergen },
        identityOf,
        fields: ["allergen", "snomed_code", "category", "criticality", "status", "reactions", "recorded_date"],
        blank: { allergen, snomed_code, category: null, criticality: null, status: "active", reactions: null, recorded_date: null },
        history: { timestamp: log.timestamp, log_id: log.id, status: status ?? null, criticality: text(a.criticality) ?? null },
        created: (h, e) => (h.status === null ? { ...h, status: e.status } : h),
      }));
    }
    return withDoc(s, list === s.doc.allergies ? s.doc : { allergies: [...list] }, clocks);
  },
};

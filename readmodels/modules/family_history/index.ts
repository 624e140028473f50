import type { LogType } from "../../../catalog/log-types.js";
import { applyOpen, itemsOf, type OpenEntry } from "../../lib/open-entries.js";
import { bool, firstStr, normName, num, objs, str, type Obj } from "../../lib/payload.js";
import { withDoc, type ReadModel } from "../../module.js";

export interface FamilyCondition {
  condition: string;
  snomed_code: string | null;
  icd10_code: string | null;
  onset_age_years: number | null;
  contributed_to_death: boolean | null;
}

/** key: `<normalized relationship>|<normalized name>` (name distinguishes two sisters). */
export interface Relative extends OpenEntry {
  relationship: string | null;
  name: string | null;
  sex: string | null;
  deceased: boolean | null;
  /** partial | completed | health_unknown; a relative sent with entered_in_error is withdrawn. */
  status: string | null;
  /** The relative's conditions as last sent: a later log replaces the list. */
  conditions: FamilyCondition[] | null;
}

/** The health history of relatives, one entry per relative. */
export interface FamilyHistoryDoc {
  relatives: Relative[];
}

const RELATION = ["relationship", "relative", "relation"];

function conditionsOf(item: Obj): FamilyCondition[] | null {
  // A single condition at top level is accepted as a one-item list.
  const list = Array.isArray(item.conditions) ? objs(item, "conditions") : str(item, "condition") ? [item] : null;
  if (list === null) return null;
  return list.flatMap((c) => {
    const condition = firstStr(c, ["condition", "condition_name", "name"]);
    if (condition === undefined) return [];
    return [{
      condition, snomed_code: str(c, "snomed_code") ?? null, icd10_code: str(c, "icd10_code") ?? null,
      onset_age_years: num(c, "onset_age_years") ?? num(c, "age_at_onset") ?? null,
      contributed_to_death: bool(c, "contributed_to_death") ?? null,
    }];
  });
}

export const handles: readonly LogType[] = ["family_history"];

export const familyHistory: ReadModel<"family_history", FamilyHistoryDoc> = {
  key: "family_history",
  kind: "stable",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ relatives: [] }),
  evolve: (s, log) => {
    let list: readonly Relative[] = s.doc.relatives;
    let clocks = s.clocks;
    for (const item of itemsOf(log.payload, ["relatives", "members"])) {
      const relationship = firstStr(item, RELATION) ?? null;
      if (relationship === null) continue;
      const name = str(item, "name") ?? null;
      ({ list, clocks } = applyOpen<Relative>({
        list, clocks, ns: "relatives", key: `${normName(relationship)}|${normName(name ?? "")}`, item, log,
        consumed: [...RELATION, "name", "sex", "deceased", "status", "conditions", "condition", "snomed_code", "icd10_code", "onset_age_years", "age_at_onset"],
        fields: {
          relationship, name, sex: str(item, "sex") ?? null, deceased: bool(item, "deceased") ?? null,
          status: str(item, "status") ?? null, conditions: conditionsOf(item),
        },
      }));
    }
    return withDoc(s, list === s.doc.relatives ? s.doc : { relatives: [...list] }, clocks);
  },
};

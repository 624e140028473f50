import type { LogPayloads } from "../../../catalog/payloads.js";
import { applyOpen, itemsOf, type OpenEntry } from "../../lib/open-entries.js";
import { finite, items, normName, num, str, text, truth, type Obj } from "../../lib/payload.js";
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

type Payload = LogPayloads["family_history"];
/**
 * A relative as a log sends it: the payload, or each item of a `relatives` or `members`
 * list (forms the catalog does not name, which stored logs may hold), read by the same names.
 * A field is read by the catalog's name, then by the other names clients send it under
 * (relative, relation, condition_name, age_at_onset), first present wins: the catalog does
 * not name those, so they are read by key.
 */
type RelativeItem = Obj & Partial<Payload>;
type ConditionItem = Obj & Partial<NonNullable<Payload["conditions"]>[number]>;

function conditionsOf(item: RelativeItem): FamilyCondition[] | null {
  // A single condition at top level (not a catalog form) is read as a one-item list.
  const list: readonly ConditionItem[] | null =
    Array.isArray(item.conditions) ? items(item.conditions) : str(item, "condition") ? [item] : null;
  if (list === null) return null;
  return list.flatMap((c) => {
    const condition = text(c.condition) ?? str(c, "condition_name") ?? str(c, "name");
    if (condition === undefined) return [];
    return [{
      condition, snomed_code: text(c.snomed_code) ?? null, icd10_code: text(c.icd10_code) ?? null,
      onset_age_years: finite(c.onset_age_years) ?? num(c, "age_at_onset") ?? null,
      contributed_to_death: truth(c.contributed_to_death) ?? null,
    }];
  });
}

/** Every name the relative's fields are read from, so none is repeated under details. */
const CONSUMED = [
  "relationship", "relative", "relation", "name", "sex", "deceased", "status", "conditions", "condition", "snomed_code", "icd10_code",
  "onset_age_years", "age_at_onset",
];

export const handles = ["family_history"] as const;

export const familyHistory: ReadModel<"family_history", FamilyHistoryDoc, "family_history"> = {
  key: "family_history",
  kind: "stable",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ relatives: [] }),
  evolve: (s, log) => {
    let list: readonly Relative[] = s.doc.relatives;
    let clocks = s.clocks;
    for (const item of itemsOf(log.payload, ["relatives", "members"]) as RelativeItem[]) {
      const relationship = text(item.relationship) ?? str(item, "relative") ?? str(item, "relation") ?? null;
      if (relationship === null) continue;
      const name = text(item.name) ?? null;
      ({ list, clocks } = applyOpen<Relative>({
        list, clocks, ns: "relatives", key: `${normName(relationship)}|${normName(name ?? "")}`, item, log, consumed: CONSUMED,
        fields: {
          relationship, name, sex: text(item.sex) ?? null, deceased: truth(item.deceased) ?? null,
          status: text(item.status) ?? null, conditions: conditionsOf(item),
        },
      }));
    }
    return withDoc(s, list === s.doc.relatives ? s.doc : { relatives: [...list] }, clocks);
  },
};

import type { LogPayloads } from "../../../catalog/payloads.js";
import { actionOf, applyEntry, type EntryMeta } from "../../lib/entities.js";
import { text } from "../../lib/payload.js";
import { withDoc, type ReadModel } from "../../module.js";

export interface InsurancePlan extends EntryMeta {
  /** primary | secondary; null for a patient's single plan (then keyed as primary). */
  rank: string | null;
  payer: string | null;
  plan_name: string | null;
  member_id: string | null;
  group_id: string | null;
}

/** Insurance plans, one per rank. */
export interface InsuranceDoc {
  plans: InsurancePlan[];
}

// A plan sent without rank is the patient's only plan, which is their primary one.
const rankKey = (rank: string | null | undefined) => rank ?? "primary";
const keyOf = (p: InsurancePlan) => rankKey(p.rank);
const FIELDS = ["rank", "payer", "plan_name", "member_id", "group_id"] as const satisfies readonly (keyof LogPayloads["insurance"])[];

export const handles = ["insurance"] as const;

export const insurance: ReadModel<"insurance", InsuranceDoc, "insurance"> = {
  key: "insurance",
  kind: "stable",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ plans: [] }),
  evolve: (s, log) => {
    const key = rankKey(text(log.payload.rank));
    const r = applyEntry<InsurancePlan>({
      list: s.doc.plans,
      clocks: s.clocks,
      ns: "plans",
      index: s.doc.plans.findIndex((p) => keyOf(p) === key),
      keyOf,
      action: actionOf(log.payload),
      patch: log.payload,
      fields: FIELDS,
      blank: { rank: null, payer: null, plan_name: null, member_id: null, group_id: null },
      log,
      onlyChanges: true,
    });
    return withDoc(s, r.list === s.doc.plans ? s.doc : { plans: [...r.list] }, r.clocks);
  },
};

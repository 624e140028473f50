import type { LogPayloads } from "../../../catalog/payloads.js";
import { actionOf, applyEntry, type EntryMeta } from "../../lib/entities.js";
import { text } from "../../lib/payload.js";
import { withDoc, type ReadModel } from "../../module.js";
import type { Address } from "../demographics/index.js";

export interface Pharmacy extends EntryMeta {
  /** retail | mail_order; null when not given (keyed as "unspecified"). */
  type: string | null;
  name: string | null;
  address: Address | null;
  phone: string | null;
}

/** Pharmacies, one per type. */
export interface PharmacyDoc {
  pharmacies: Pharmacy[];
}

const typeKey = (t: string | null | undefined) => t ?? "unspecified";
const keyOf = (p: Pharmacy) => typeKey(p.type);
const FIELDS = ["type", "name", "address", "phone"] as const satisfies readonly (keyof LogPayloads["pharmacy"])[];

export const handles = ["pharmacy"] as const;

export const pharmacy: ReadModel<"pharmacy", PharmacyDoc, "pharmacy"> = {
  key: "pharmacy",
  kind: "stable",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ pharmacies: [] }),
  evolve: (s, log) => {
    const key = typeKey(text(log.payload.type));
    const r = applyEntry<Pharmacy>({
      list: s.doc.pharmacies,
      clocks: s.clocks,
      ns: "pharmacies",
      index: s.doc.pharmacies.findIndex((p) => keyOf(p) === key),
      keyOf,
      action: actionOf(log.payload),
      patch: log.payload,
      fields: FIELDS,
      blank: { type: null, name: null, address: null, phone: null },
      log,
      onlyChanges: true,
    });
    return withDoc(s, r.list === s.doc.pharmacies ? s.doc : { pharmacies: [...r.list] }, r.clocks);
  },
};

import type { LogType } from "../../../catalog/log-types.js";
import { actionOf, applyEntry, type EntryMeta } from "../../lib/entities.js";
import { str } from "../../lib/payload.js";
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

export const handles: readonly LogType[] = ["pharmacy"];

export const pharmacy: ReadModel<"pharmacy", PharmacyDoc> = {
  key: "pharmacy",
  kind: "stable",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ pharmacies: [] }),
  evolve: (s, log) => {
    const key = typeKey(str(log.payload, "type"));
    const r = applyEntry<Pharmacy>({
      list: s.doc.pharmacies,
      clocks: s.clocks,
      ns: "pharmacies",
      index: s.doc.pharmacies.findIndex((p) => keyOf(p) === key),
      keyOf,
      action: actionOf(log.payload),
      patch: log.payload,
      fields: ["type", "name", "address", "phone"],
      blank: { type: null, name: null, address: null, phone: null },
      log,
      onlyChanges: true,
    });
    return withDoc(s, r.list === s.doc.pharmacies ? s.doc : { pharmacies: [...r.list] }, r.clocks);
  },
};

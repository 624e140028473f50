import type { LogPayloads } from "../../../catalog/payloads.js";
import { actionOf, applyEntry, type EntryMeta } from "../../lib/entities.js";
import { normName, text } from "../../lib/payload.js";
import { withDoc, type ReadModel } from "../../module.js";

export interface EmergencyContact extends EntryMeta {
  name: string;
  relationship: string | null;
  phone: string | null;
  email: string | null;
}

/** Emergency contacts, one per normalized name, in the order first added. */
export interface EmergencyContactDoc {
  contacts: EmergencyContact[];
}

const keyOf = (c: EmergencyContact) => normName(c.name ?? "");
const FIELDS = ["name", "relationship", "phone", "email"] as const satisfies readonly (keyof LogPayloads["emergency_contact"])[];

export const handles = ["emergency_contact"] as const;

export const emergencyContact: ReadModel<"emergency_contact", EmergencyContactDoc, "emergency_contact"> = {
  key: "emergency_contact",
  kind: "stable",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ contacts: [] }),
  evolve: (s, log) => {
    const name = text(log.payload.name);
    if (name === undefined) return s; // no identity: nothing to attach the fact to
    const r = applyEntry<EmergencyContact>({
      list: s.doc.contacts,
      clocks: s.clocks,
      ns: "contacts",
      index: s.doc.contacts.findIndex((c) => keyOf(c) === normName(name)),
      keyOf,
      action: actionOf(log.payload),
      patch: log.payload,
      fields: FIELDS,
      blank: { name, relationship: null, phone: null, email: null },
      log,
      onlyChanges: true,
    });
    return withDoc(s, r.list === s.doc.contacts ? s.doc : { contacts: [...r.list] }, r.clocks);
  },
};

import { actionOf, applyEntry, type EntryMeta } from "../../lib/entities.js";
import { itemExtensions } from "../../lib/extensions.js";
import { items, normName, text } from "../../lib/payload.js";
import { withDoc, type ReadModel } from "../../module.js";
import type { LogPayloads } from "../../../catalog/payloads.js";

export interface CareTeamMember extends EntryMeta {
  role: string;
  name: string | null;
  npi: string | null;
  organization: string | null;
}

/** Care team members, one per (role, name). */
export interface CareTeamDoc {
  members: CareTeamMember[];
}

const memberKey = (role: string, name: string | null | undefined) => `${normName(role)}|${normName(name ?? "")}`;
// A stored member holds its fields as sent: one that is not text counts as absent here.
const keyOf = (m: CareTeamMember) => memberKey(text(m.role) ?? "", text(m.name));
const FIELDS = ["role", "name", "npi", "organization"] as const satisfies readonly (keyof LogPayloads["care_team"]["members"][number])[];

export const handles = ["care_team"] as const;

export const careTeam: ReadModel<"care_team", CareTeamDoc, "care_team"> = {
  key: "care_team",
  kind: "stable",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ members: [] }),
  evolve: (s, log) => {
    let list: readonly CareTeamMember[] = s.doc.members;
    let clocks = s.clocks;
    for (const m of items(log.payload.members)) {
      const role = text(m.role);
      if (role === undefined) continue;
      const key = memberKey(role, text(m.name));
      ({ list, clocks } = applyEntry<CareTeamMember>({
        list,
        clocks,
        ns: "members",
        index: list.findIndex((x) => keyOf(x) === key),
        keyOf,
        action: actionOf(m),
        // The payload's extensions describe every member it lists.
        patch: { ...m, extensions: itemExtensions(log.payload, m) },
        fields: FIELDS,
        blank: { role, name: null, npi: null, organization: null },
        log,
        source: log.payload.source,
      }));
    }
    return withDoc(s, list === s.doc.members ? s.doc : { members: [...list] }, clocks);
  },
};

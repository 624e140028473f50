import type { LogType } from "../../../catalog/log-types.js";
import { actionOf, applyEntry, type EntryMeta } from "../../lib/entities.js";
import { itemExtensions } from "../../lib/extensions.js";
import { normName, objs, str } from "../../lib/payload.js";
import { withDoc, type ReadModel } from "../../module.js";

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
const keyOf = (m: CareTeamMember) => memberKey(m.role ?? "", m.name);

export const handles: readonly LogType[] = ["care_team"];

export const careTeam: ReadModel<"care_team", CareTeamDoc> = {
  key: "care_team",
  kind: "stable",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ members: [] }),
  evolve: (s, log) => {
    let list: readonly CareTeamMember[] = s.doc.members;
    let clocks = s.clocks;
    for (const m of objs(log.payload, "members")) {
      const role = str(m, "role");
      if (role === undefined) continue;
      const key = memberKey(role, str(m, "name"));
      ({ list, clocks } = applyEntry<CareTeamMember>({
        list,
        clocks,
        ns: "members",
        index: list.findIndex((x) => keyOf(x) === key),
        keyOf,
        action: actionOf(m),
        // The payload's extensions describe every member it lists.
        patch: { ...m, extensions: itemExtensions(log.payload, m) },
        fields: ["role", "name", "npi", "organization"],
        blank: { role, name: null, npi: null, organization: null },
        log,
        source: log.payload.source,
      }));
    }
    return withDoc(s, list === s.doc.members ? s.doc : { members: [...list] }, clocks);
  },
};

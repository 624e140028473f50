import type { LogPayloads } from "../../../catalog/payloads.js";
import type { SourceRef } from "../../lib/lists.js";
import type { Obj } from "../../lib/payload.js";
import { evolvePatchDoc } from "../../lib/patch-doc.js";
import type { ReadModel } from "../../module.js";

/** Merged social determinants (from `social_determinants` logs); fields absent until first given. */
export interface SocialDoc {
  living_situation?: string;
  support_system?: string;
  transportation_access?: string;
  employment_status?: string;
  housing_stability?: string;
  extensions: Obj;
  sources: SourceRef[];
}

const FIELDS = [
  "living_situation", "support_system", "transportation_access", "employment_status", "housing_stability",
] as const satisfies readonly (keyof LogPayloads["social_determinants"])[];

export const handles = ["social_determinants"] as const;

export const social: ReadModel<"social", SocialDoc, "social_determinants"> = {
  key: "social",
  kind: "stable",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ extensions: {}, sources: [] }),
  evolve: (s, log) => evolvePatchDoc(s, log, FIELDS),
};

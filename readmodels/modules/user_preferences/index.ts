import type { LogPayloads } from "../../../catalog/payloads.js";
import type { SourceRef } from "../../lib/lists.js";
import type { Obj } from "../../lib/payload.js";
import { evolvePatchDoc } from "../../lib/patch-doc.js";
import type { ReadModel } from "../../module.js";

/** Merged preferences (from `preferences` logs); fields absent until first given. */
export interface UserPreferencesDoc {
  reading_level?: string;
  tone?: string;
  comfort_with_technology?: string;
  energy_level?: string;
  dietary_preferences?: string[];
  symptoms_need_help_managing?: string[];
  things_to_track?: string[];
  /** Merged per channel: a log naming only `sms` leaves `push` and `email` as they were. */
  notification_preferences: { push?: boolean; email?: boolean; sms?: boolean };
  extensions: Obj;
  sources: SourceRef[];
}

const FIELDS = [
  "reading_level", "tone", "comfort_with_technology", "energy_level", "dietary_preferences",
  "symptoms_need_help_managing", "things_to_track",
] as const satisfies readonly (keyof LogPayloads["preferences"])[];
/** Merged at leaf level: a log naming one channel leaves the others as they were. */
const TREE_FIELDS = ["notification_preferences"] as const satisfies readonly (keyof LogPayloads["preferences"])[];

export const handles = ["preferences"] as const;

export const userPreferences: ReadModel<"user_preferences", UserPreferencesDoc, "preferences"> = {
  key: "user_preferences",
  kind: "stable",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ notification_preferences: {}, extensions: {}, sources: [] }),
  evolve: (s, log) => evolvePatchDoc(s, log, FIELDS, TREE_FIELDS),
};

import type { LogType } from "../../../catalog/log-types.js";
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
] as const;

export const handles: readonly LogType[] = ["preferences"];

export const userPreferences: ReadModel<"user_preferences", UserPreferencesDoc> = {
  key: "user_preferences",
  kind: "stable",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ notification_preferences: {}, extensions: {}, sources: [] }),
  evolve: (s, log) => evolvePatchDoc(s, log, FIELDS, ["notification_preferences"]),
};

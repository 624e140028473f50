import type { Static } from "@sinclair/typebox";
import type { LogType } from "./log-types.js";
import type { conversationEntries } from "./schemas/conversation.js";
import type { engagementEntries } from "./schemas/engagement.js";
import type { labClinicalEntries } from "./schemas/lab-clinical.js";
import type { medicationEntries } from "./schemas/medication.js";
import type { passiveEntries } from "./schemas/passive.js";
import type { profileEntries } from "./schemas/profile.js";
import type { questionnaireEntries } from "./schemas/questionnaire.js";
import type { symptomEntries } from "./schemas/symptom.js";

type Entries = typeof symptomEntries &
  typeof labClinicalEntries &
  typeof engagementEntries &
  typeof passiveEntries &
  typeof profileEntries &
  typeof medicationEntries &
  typeof conversationEntries &
  typeof questionnaireEntries;

/**
 * The payload of each log type, as its schema in the catalog accepts it: derived from the
 * schema, so the two cannot drift. Fields the schema leaves optional are optional here.
 * Objects are open (unknown fields are kept), but those fields are not typed: a reader
 * that relies on one names it as such.
 *
 * It describes what today's catalog accepts. A log stored under an older catalog may hold
 * another shape; readmodels/lib/payload.ts says how reducers read it anyway.
 */
export type LogPayloads = { [T in LogType]: Static<Entries[T]["schema"]> };

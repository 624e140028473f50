import { EVENT_MODULES, STABLE_MODULES, type ModuleKey, type ReadModel } from "./module.js";
import { adherence } from "./modules/adherence/index.js";
import { allergies } from "./modules/allergies/index.js";
import { careTeam } from "./modules/care_team/index.js";
import { clinicalContext } from "./modules/clinical_context/index.js";
import { conditionDiagnosis } from "./modules/condition_diagnosis/index.js";
import { conversations } from "./modules/conversations/index.js";
import { demographics } from "./modules/demographics/index.js";
import { devices } from "./modules/devices/index.js";
import { emergencyContact } from "./modules/emergency_contact/index.js";
import { emotionalState } from "./modules/emotional_state/index.js";
import { engagement } from "./modules/engagement/index.js";
import { familyHistory } from "./modules/family_history/index.js";
import { glucose } from "./modules/glucose/index.js";
import { heart } from "./modules/heart/index.js";
import { immunizations } from "./modules/immunizations/index.js";
import { insurance } from "./modules/insurance/index.js";
import { labResults } from "./modules/lab_results/index.js";
import { medications } from "./modules/medications/index.js";
import { pharmacy } from "./modules/pharmacy/index.js";
import { physicalActivity } from "./modules/physical_activity/index.js";
import { procedures } from "./modules/procedures/index.js";
import { questionnaires } from "./modules/questionnaires/index.js";
import { sleep } from "./modules/sleep/index.js";
import { social } from "./modules/social/index.js";
import { symptoms } from "./modules/symptoms/index.js";
import { userPreferences } from "./modules/user_preferences/index.js";
import { vitals } from "./modules/vitals/index.js";
import type { ModulePayloads } from "./payloads.js";

/** Every read model by key; the mapped type makes a missing or mistyped module a compile error. */
export const MODELS: { readonly [K in ModuleKey]: ReadModel<K, ModulePayloads[K]> } = {
  demographics, condition_diagnosis: conditionDiagnosis, medications, user_preferences: userPreferences,
  emergency_contact: emergencyContact, care_team: careTeam, insurance, social, pharmacy, procedures, allergies,
  immunizations, devices, family_history: familyHistory, symptoms, emotional_state: emotionalState, adherence,
  physical_activity: physicalActivity, engagement, heart, sleep, lab_results: labResults, vitals,
  clinical_context: clinicalContext, questionnaires, conversations, glucose,
};

export const MODULE_KEYS: readonly ModuleKey[] = [...STABLE_MODULES, ...EVENT_MODULES];

/** Version of each module's rules and shape, to be stored with a snapshot of the state. */
export const MODULE_VERSIONS: Readonly<Record<ModuleKey, number>> = Object.fromEntries(
  MODULE_KEYS.map((k) => [k, MODELS[k].version]),
) as Record<ModuleKey, number>;

/**
 * The modules a snapshot taken under `stored` versions must rebuild by replay: those whose
 * version changed (or are new), and those that read one of them, transitively.
 */
export function modulesToRebuild(stored: Readonly<Partial<Record<string, number>>>): ModuleKey[] {
  const out = new Set<ModuleKey>(MODULE_KEYS.filter((k) => stored[k] !== MODELS[k].version));
  let grew = out.size > 0;
  while (grew) {
    grew = false;
    for (const k of MODULE_KEYS) {
      if (!out.has(k) && MODELS[k].reads.some((r) => out.has(r))) {
        out.add(k);
        grew = true;
      }
    }
  }
  return MODULE_KEYS.filter((k) => out.has(k));
}

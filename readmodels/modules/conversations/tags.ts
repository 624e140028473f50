import type { MEMORY_TAGS } from "../../../catalog/schemas/conversation.js";

export type MemoryTag = (typeof MEMORY_TAGS)[number];

/**
 * The tag a memory without one gets: the catalog's broadest category, what the patient
 * cares about, for a statement no rule recognises.
 */
export const FALLBACK_TAG: MemoryTag = "interests_concerns";

/**
 * Keyword rules, one per catalog tag, in tie-break order: clinical tags before the patient's
 * everyday life, so "worried about my chemo" files under treatment. A keyword is a whole
 * word or phrase, or with a trailing `*` a stem ("nause*": nausea, nauseous), so short words
 * do not match inside others ("son" in "sonogram"). Deliberately a small, readable list:
 * the tagger is a deterministic fold step, not a classifier, and a miss falls back.
 */
const RULES: readonly (readonly [MemoryTag, readonly string[]])[] = [
  ["clinical_observations", [
    "observed", "noted", "on exam", "on examination", "examined", "presented with", "wound*", "incision*", "edema", "oedema",
    "jaundic*", "pallor",
  ]],
  ["lab_and_vitals", [
    "lab", "labs", "blood test*", "blood work", "bloodwork", "blood pressure", "bp", "heart rate", "pulse", "glucose", "blood sugar*", "a1c",
    "hba1c", "cholesterol", "hemoglobin", "haemoglobin", "platelet*", "white count", "wbc", "creatinine", "potassium", "sodium", "psa",
    "tumor marker*", "oxygen", "spo2", "saturation*", "temperature*", "weight", "weighs", "bmi", "vitals", "test result*", "scan result*",
  ]],
  ["health_history", [
    "history of", "years ago", "as a child", "childhood", "in the past", "previously", "used to have", "had surgery", "hospitali*",
    "family history", "allerg*", "vaccin*", "immuniz*", "immunis*",
  ]],
  ["diagnosis", [
    "diagnos*", "stage", "cancer*", "carcinoma*", "tumor*", "tumour*", "lymphoma*", "leukemia", "leukaemia", "metasta*", "diabet*",
    "hypertension", "copd", "asthma*", "heart failure", "arthritis", "dementia", "condition", "conditions",
  ]],
  ["treatment", [
    "chemo*", "radiation", "radiotherapy", "immunotherapy", "surgery", "operation", "medication*", "medicine*", "meds", "pill", "pills",
    "tablet*", "dose*", "dosage", "prescri*", "insulin", "inhaler*", "infusion*", "injection*", "antibiotic*", "therapy", "treatment*",
    "physio*", "dialysis", "transplant*",
  ]],
  ["symptom_context", [
    "pain", "pains", "painful", "ache*", "aching", "hurt*", "sore*", "nause*", "vomit*", "tired*", "fatigue*", "exhaust*", "dizz*", "headache*", "migraine*",
    "cough*", "short of breath", "shortness of breath", "breathless*", "fever*", "chills", "rash*", "itch*", "swelling", "swollen", "numb*",
    "tingl*", "cramp*", "diarrh*", "constipat*", "bleed*", "symptom*", "insomnia", "can't sleep", "cannot sleep",
  ]],
  ["mood_stress", [
    "anxious", "anxiety", "stress*", "worri*", "worry*", "sad", "sadness", "depress*", "lonely", "loneliness", "scared", "afraid", "fear*",
    "mood*", "overwhelm*", "upset", "frustrat*", "angry", "anger", "cry", "cries", "crying", "nervous", "panic*", "hopeless*", "grief",
    "grieving",
  ]],
  ["interests_concerns", [
    "enjoy*", "hobby", "hobbies", "love", "loves", "likes", "interested in", "passion*", "favourite", "favorite", "concern*", "goal*",
    "wants to", "looking forward",
  ]],
  ["nutrition_related", [
    "eat", "eats", "eating", "ate", "food*", "diet*", "meal*", "appetite", "vegetarian", "vegan", "gluten", "lactose", "dairy", "snack*",
    "breakfast", "lunch", "dinner", "hydrat*", "protein", "fruit*", "vegetable*", "coffee", "alcohol", "nutrition*", "swallow*",
  ]],
  ["daily_functions_of_living", [
    "walk*", "bath", "bathe", "bathing", "shower*", "dressing", "get dressed", "cook", "cooks", "cooking", "chores", "housework",
    "cleaning", "stairs", "drive", "drives", "driving", "toilet*", "mobility", "cane", "wheelchair", "out of bed", "grocer*", "shopping",
    "errands", "sleep*", "self-care",
  ]],
  ["social_determinants_of_health", [
    "lives alone", "live alone", "living alone", "lives with", "caregiver*", "carer*", "family", "daughter*", "son", "sons", "wife",
    "husband", "partner", "children", "grandchild*", "neighbor*", "neighbour*", "friend*", "transport*", "bus", "ride", "rides",
    "insurance", "afford*", "money", "bills", "income", "job", "jobs", "unemploy*", "employ*", "retired", "housing", "rent", "homeless*",
    "church", "community",
  ]],
];

const pattern = (k: string) =>
  (k.endsWith("*") ? k.slice(0, -1) : k).replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/ /g, "\\s+") + (k.endsWith("*") ? "" : "(?![a-z0-9])");
const MATCHERS = RULES.map(([tag, words]) => [tag, new RegExp(`(?<![a-z0-9])(?:${words.map(pattern).join("|")})`, "g")] as const);

/**
 * The catalog tag of a memory the client left untagged: the rule with the most keyword hits
 * in its text, ties to the earlier rule, FALLBACK_TAG when none hits. A pure function of
 * the text, so replays and any arrival order tag alike.
 */
export function autoTag(content: string): MemoryTag {
  const text = content.toLowerCase();
  let best: MemoryTag = FALLBACK_TAG;
  let hits = 0;
  for (const [tag, re] of MATCHERS) {
    const n = text.match(re)?.length ?? 0;
    if (n > hits) {
      best = tag;
      hits = n;
    }
  }
  return best;
}

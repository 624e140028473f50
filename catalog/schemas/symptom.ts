import type { Static } from "@sinclair/typebox";
import { entry, eachItem, issue, type CatalogEntry, type PayloadIssue } from "../issues.js";
import type { LOG_GROUPS } from "../log-types.js";
import {
  Bool, Count, DateOrDateTimeStr, Entries, Enum, Extensions, Int, List, Nullable, Num, Obj, Opt, ReqStr, Str, Strings,
  extensible, withSource,
} from "./common.js";

/** Score ranges of the instruments the service knows; any other instrument is clinic-defined. */
export const SYMPTOM_INSTRUMENT_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  esas_r: [0, 10], pro_ctcae: [0, 4], ctcae: [0, 5], custom: [0, 10],
};
/** The instrument's own recall window; the catalog forbids setting it arbitrarily. */
const RECALL_DAYS: Readonly<Record<string, number>> = { esas_r: 0, pro_ctcae: 7 };
export const ESAS_R_SYMPTOMS = [
  "pain", "tiredness", "drowsiness", "nausea", "appetite", "shortness_of_breath", "depression", "anxiety", "wellbeing",
  "constipation",
] as const;
const KNOWN = Object.keys(SYMPTOM_INSTRUMENT_RANGES).join(", ");

const SymptomEntry = Obj({
  name: ReqStr({ description: `Symptom name. For instrument esas_r one of ${ESAS_R_SYMPTOMS.join(", ")}.` }),
  type: Opt(Str({ description: "Classification" })),
  score: Num({
    description:
      "0 means resolved for every instrument. Range by instrument: esas_r 0-10, pro_ctcae 0-4, ctcae 0-5, custom 0-10; " +
      "any other (clinic-defined) instrument: within scale_min..scale_max, which are then required.",
  }),
  scale_min: Opt(Num({ description: "Auto-filled for known instruments (must match when sent); required for clinic-defined ones." })),
  scale_max: Opt(Num({ description: "Auto-filled for known instruments (must match when sent); required for clinic-defined ones, above scale_min." })),
  frequency: Opt(Int({ minimum: 0, maximum: 4, description: "PRO-CTCAE frequency axis (0-4); only for instrument pro_ctcae." })),
  interference: Opt(Int({ minimum: 0, maximum: 4, description: "PRO-CTCAE interference axis (0-4); only for instrument pro_ctcae." })),
  snomed_code: Opt(Str({ description: "Preferred identity key for cross-instrument matching" })),
  meddra_code: Opt(Str({ description: "Secondary identity when snomed_code is absent" })),
  relatedness_to_treatment: Opt(Str()),
  onset_date: Opt(DateOrDateTimeStr()),
  resolution_date: Opt(DateOrDateTimeStr()),
  resolution_status: Opt(Str()),
  action_taken: Opt(Str()),
  seriousness: Opt(Str()),
  suspected_agent: Opt(Str()),
  requires_hospitalization: Opt(Bool()),
  extensions: Opt(Extensions),
});

export const SymptomReport = Obj({
  instrument: ReqStr({ description: `${KNOWN}, or a clinic-defined instrument name (then each symptom needs scale_min and scale_max).` }),
  recall_period_days: Opt(Count({ description: "The instrument's own recall window: 0 for esas_r, 7 for pro_ctcae." })),
  symptoms: Entries(SymptomEntry),
  ...extensible,
});

type Symptom = Static<typeof SymptomEntry>;

function checkKnownInstrument(instrument: string, [lo, hi]: readonly [number, number], s: Symptom, path: (string | number)[]): PayloadIssue[] {
  const out: PayloadIssue[] = [];
  if (s.score < lo || s.score > hi) {
    out.push(issue([...path, "score"], `score ${s.score} is outside ${lo}-${hi} for instrument ${instrument}`, s.score));
  }
  if (s.scale_min !== undefined && s.scale_min !== lo) {
    out.push(issue([...path, "scale_min"], `scale_min ${s.scale_min} does not match ${lo} for instrument ${instrument}; omit it`, s.scale_min));
  }
  if (s.scale_max !== undefined && s.scale_max !== hi) {
    out.push(issue([...path, "scale_max"], `scale_max ${s.scale_max} does not match ${hi} for instrument ${instrument}; omit it`, s.scale_max));
  }
  if (instrument === "esas_r" && !(ESAS_R_SYMPTOMS as readonly string[]).includes(s.name)) {
    out.push(issue([...path, "name"], `must be one of ${ESAS_R_SYMPTOMS.join(", ")} for instrument esas_r`, s.name));
  }
  return out;
}

function checkClinicInstrument(instrument: string, s: Symptom, path: (string | number)[]): PayloadIssue[] {
  const why = `for clinic-defined instrument ${instrument} (known instruments: ${KNOWN})`;
  if (s.scale_min === undefined || s.scale_max === undefined) {
    const missing = s.scale_min === undefined ? "scale_min" : "scale_max";
    return [issue([...path, missing], `is required ${why}`, undefined)];
  }
  if (s.scale_min >= s.scale_max) {
    return [issue([...path, "scale_max"], `scale_max ${s.scale_max} must be greater than scale_min ${s.scale_min}`, s.scale_max)];
  }
  // 0 resolves a symptom on every instrument, even one whose scale starts above 0.
  if (s.score !== 0 && (s.score < s.scale_min || s.score > s.scale_max)) {
    return [issue([...path, "score"], `score ${s.score} is outside ${s.scale_min}-${s.scale_max} for instrument ${instrument}`, s.score)];
  }
  return [];
}

export function refineSymptomReport(p: Static<typeof SymptomReport>): PayloadIssue[] {
  const range = SYMPTOM_INSTRUMENT_RANGES[p.instrument];
  const out: PayloadIssue[] = [];
  const recall = RECALL_DAYS[p.instrument];
  if (p.recall_period_days !== undefined && recall !== undefined && p.recall_period_days !== recall) {
    out.push(issue(["recall_period_days"], `must be ${recall} for instrument ${p.instrument}, whose recall window is fixed`, p.recall_period_days));
  }
  out.push(
    ...eachItem(p.symptoms, ["symptoms"], (s, path) => {
      const found = range !== undefined ? checkKnownInstrument(p.instrument, range, s, path) : checkClinicInstrument(p.instrument, s, path);
      for (const axis of ["frequency", "interference"] as const) {
        if (s[axis] !== undefined && p.instrument !== "pro_ctcae") {
          found.push(issue([...path, axis], `is a PRO-CTCAE axis; omit it for instrument ${p.instrument}`, s[axis]));
        }
      }
      return found;
    }),
  );
  return out;
}

export const MoodReport = Obj({
  moods: Entries(
    Obj({
      mood: ReqStr({ description: "Categorical mood label" }),
      intensity: Opt(Nullable(Num({ minimum: 0, maximum: 10 }), { description: "0 to 10 inclusive; omit or null when unknown" })),
      extensions: Opt(Extensions),
    }),
  ),
  ...extensible,
});

const Code = { snomed_code: Opt(Str()), meddra_code: Opt(Str({ description: "Used when snomed_code is unset" })) };

export const SymptomFreeText = Obj({
  text: ReqStr({ description: "Unstructured description; feeds extraction of symptom_report, symptom_detail and mood_report" }),
  associated_symptoms: Opt(List(Obj({ name: ReqStr(), ...Code }))),
  ...withSource,
});

export const SymptomDetail = Obj({
  symptom_type: ReqStr({ description: "Used for matching when both codes are unset" }),
  ...Code,
  detail_type: ReqStr({ description: "For example location, duration, character, trigger, alleviating_factor, recurrence_status, other; client-extensible" }),
  question: Opt(Str()),
  response: ReqStr(),
  ...withSource,
});

/** Class ranges the catalog states per instrument; others only get the 0-100 bound. */
const CLASS_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  nyha: [1, 4], ccs: [1, 4], ecog: [0, 4], karnofsky: [0, 100],
};
const ClassValue = (description: string) => Int({ minimum: 0, maximum: 100, description });

export const FunctionalClass = Obj({
  instrument: ReqStr({ description: "For example nyha, ccs, ecog, karnofsky, adl, iadl" }),
  class: ClassValue("NYHA/CCS 1-4, ECOG 0-4, Karnofsky 0-100 (checked per instrument), ADL/IADL item-based"),
  reported_by: Opt(Enum(["patient", "clinician", "caregiver"])),
  change_from_prior: Opt(Obj({ previous_class: Opt(ClassValue("Same range as class")), date: Opt(DateOrDateTimeStr()) })),
  assessment_type: Opt(Enum(["ECOG", "Karnofsky", "NYHA", "ADL", "IADL", "other"])),
  narrative: Opt(Str()),
  domain: Opt(Enum(["physical", "cognitive", "social"])),
  assessor_type: Opt(Enum(["clinician", "patient", "caregiver"])),
  score_scale: Opt(Str({ description: "Scale of a non-standard instrument" })),
  baseline_comparison: Opt(Str()),
  functional_limitations: Opt(Strings()),
  ...extensible,
});

export function refineFunctionalClass(p: Static<typeof FunctionalClass>): PayloadIssue[] {
  const range = CLASS_RANGES[p.instrument.toLowerCase()];
  if (range === undefined) return [];
  const [lo, hi] = range;
  const out: PayloadIssue[] = [];
  const check = (value: number | undefined, path: string[], label: string) => {
    if (value !== undefined && (value < lo || value > hi)) {
      out.push(issue(path, `${label} ${value} is outside ${lo}-${hi} for instrument ${p.instrument}`, value));
    }
  };
  check(p.class, ["class"], "class");
  check(p.change_from_prior?.previous_class, ["change_from_prior", "previous_class"], "previous_class");
  return out;
}

export const HealthMetric = Obj({
  metric_type: ReqStr({ description: "wellbeing, energy, pain_nrs, appetite, hydration, or client-defined" }),
  score: Num({ description: "Must lie within scale_min..scale_max" }),
  scale_min: Num({ description: "Always explicit, never inferred; below scale_max" }),
  scale_max: Num({ description: "Always explicit, never inferred; above scale_min" }),
  ...extensible,
});

export function refineHealthMetric(p: Static<typeof HealthMetric>): PayloadIssue[] {
  if (p.scale_min >= p.scale_max) {
    return [issue(["scale_max"], `scale_max ${p.scale_max} must be greater than scale_min ${p.scale_min}`, p.scale_max)];
  }
  if (p.score < p.scale_min || p.score > p.scale_max) {
    return [issue(["score"], `score ${p.score} is outside ${p.scale_min}-${p.scale_max} for metric ${p.metric_type}`, p.score)];
  }
  return [];
}

export const symptomEntries = {
  symptom_report: entry(SymptomReport, refineSymptomReport),
  mood_report: entry(MoodReport),
  symptom_free_text: entry(SymptomFreeText),
  symptom_detail: entry(SymptomDetail),
  functional_class: entry(FunctionalClass, refineFunctionalClass),
  health_metric: entry(HealthMetric, refineHealthMetric),
} satisfies Record<(typeof LOG_GROUPS)["symptom"][number], CatalogEntry>;

/**
 * The LOINC codes the inbound mappers recognise, each with where it goes: the single
 * source of truth for "which code lands where", so mappers and their refusal messages
 * read the same table.
 */

/** The vitals_measurement keys (catalog/schemas/lab-clinical.ts `Measurements`). */
export type VitalKey =
  | "systolic_bp_mmhg" | "diastolic_bp_mmhg" | "heart_rate_bpm" | "spo2_percent" | "weight_kg" | "temperature_celsius" | "respiratory_rate_bpm";

/** A unit's value in the catalog's unit, by UCUM code or the unit text senders use. */
type Units = Readonly<Record<string, (v: number) => number>>;

const same = (v: number) => v;
const PRESSURE: Units = { "mm[Hg]": same, mmHg: same };
const RATE: Units = { "/min": same, "{beats}/min": same, "{breaths}/min": same, "beats/min": same, "breaths/min": same, bpm: same };
const PERCENT: Units = { "%": same };
const CELSIUS: Units = { Cel: same, "°C": same, C: same, "[degF]": (f) => ((f - 32) * 5) / 9, "°F": (f) => ((f - 32) * 5) / 9 };
const KILOGRAMS: Units = { kg: same, g: (g) => g / 1000, "[lb_av]": (lb) => lb * 0.45359237, lb: (lb) => lb * 0.45359237, lbs: (lb) => lb * 0.45359237 };
const CENTIMETRES: Units = { cm: same, m: (m) => m * 100, "[in_i]": (i) => i * 2.54, in: (i) => i * 2.54 };
const BMI: Units = { "kg/m2": same, "kg/m^2": same };

export interface VitalCode {
  /** What the code measures, for messages. */
  name: string;
  /**
   * vitals_measurement: a key of its measurements. clinical_measurement: the catalog's
   * vitals have no key for it (height, BMI, head circumference), so it is a visit
   * measurement, as the catalog describes clinical_measurement ("BMI from visit").
   */
  home: { log_type: "vitals_measurement"; key: VitalKey } | { log_type: "clinical_measurement"; measurement_type: string; unit: string };
  units: Units;
}

/** Vital signs by LOINC (the R4 vital signs profile's codes and their common siblings). */
export const VITAL_SIGNS: Readonly<Record<string, VitalCode>> = {
  "8480-6": { name: "systolic blood pressure", home: { log_type: "vitals_measurement", key: "systolic_bp_mmhg" }, units: PRESSURE },
  "8462-4": { name: "diastolic blood pressure", home: { log_type: "vitals_measurement", key: "diastolic_bp_mmhg" }, units: PRESSURE },
  "8867-4": { name: "heart rate", home: { log_type: "vitals_measurement", key: "heart_rate_bpm" }, units: RATE },
  "8889-8": { name: "heart rate by pulse oximetry", home: { log_type: "vitals_measurement", key: "heart_rate_bpm" }, units: RATE },
  "9279-1": { name: "respiratory rate", home: { log_type: "vitals_measurement", key: "respiratory_rate_bpm" }, units: RATE },
  "8310-5": { name: "body temperature", home: { log_type: "vitals_measurement", key: "temperature_celsius" }, units: CELSIUS },
  "8331-1": { name: "oral temperature", home: { log_type: "vitals_measurement", key: "temperature_celsius" }, units: CELSIUS },
  "8328-7": { name: "axillary temperature", home: { log_type: "vitals_measurement", key: "temperature_celsius" }, units: CELSIUS },
  "8333-7": { name: "tympanic membrane temperature", home: { log_type: "vitals_measurement", key: "temperature_celsius" }, units: CELSIUS },
  "2708-6": { name: "oxygen saturation in arterial blood", home: { log_type: "vitals_measurement", key: "spo2_percent" }, units: PERCENT },
  "59408-5": { name: "oxygen saturation by pulse oximetry", home: { log_type: "vitals_measurement", key: "spo2_percent" }, units: PERCENT },
  "29463-7": { name: "body weight", home: { log_type: "vitals_measurement", key: "weight_kg" }, units: KILOGRAMS },
  "3141-9": { name: "body weight measured", home: { log_type: "vitals_measurement", key: "weight_kg" }, units: KILOGRAMS },
  "8302-2": { name: "body height", home: { log_type: "clinical_measurement", measurement_type: "body_height", unit: "cm" }, units: CENTIMETRES },
  "8306-3": { name: "body height lying", home: { log_type: "clinical_measurement", measurement_type: "body_height", unit: "cm" }, units: CENTIMETRES },
  "9843-4": { name: "head circumference", home: { log_type: "clinical_measurement", measurement_type: "head_circumference", unit: "cm" }, units: CENTIMETRES },
  "39156-5": { name: "body mass index", home: { log_type: "clinical_measurement", measurement_type: "bmi", unit: "kg/m2" }, units: BMI },
};

/** Panels whose values are in their components or members, not in a value of their own. */
export const VITAL_PANELS: Readonly<Record<string, string>> = {
  "85354-9": "blood pressure panel",
  "55284-4": "blood pressure systolic and diastolic",
  "85353-1": "vital signs panel",
};

/**
 * Blood glucose codes a continuous glucose monitor reports under. Sent with a device they
 * are cgm_reading (see observation.ts); mmol/L is converted by the catalog's factor.
 */
export const GLUCOSE: Readonly<Record<string, { name: string; mmol: boolean }>> = {
  "2339-0": { name: "glucose in blood", mmol: false },
  "15074-8": { name: "glucose in blood", mmol: true },
  "2345-7": { name: "glucose in serum or plasma", mmol: false },
  "14749-6": { name: "glucose in serum or plasma", mmol: true },
  "99504-3": { name: "glucose in interstitial fluid", mmol: false },
};

/** mg/dL per mmol/L of glucose (catalog/schemas/passive.ts, cgm_reading). */
export const GLUCOSE_MG_DL_PER_MMOL = 18.018;

/**
 * Social history by LOINC: a social_determinants field, or (tobacco, alcohol: the schema
 * has no field for them) an extensions key, the catalog's place for facts without a typed slot.
 */
export const SOCIAL_HISTORY: Readonly<Record<string, { name: string; field: string; typed: boolean }>> = {
  "71802-3": { name: "housing status", field: "housing_stability", typed: true },
  "93033-9": { name: "worry about losing housing", field: "housing_stability", typed: true },
  "67875-5": { name: "employment status", field: "employment_status", typed: true },
  "93030-5": { name: "lack of transportation", field: "transportation_access", typed: true },
  "63512-8": { name: "people living at this address", field: "living_situation", typed: true },
  "93029-7": { name: "contact with people one cares about", field: "support_system", typed: true },
  "72166-2": { name: "tobacco smoking status", field: "tobacco_smoking_status", typed: false },
  "11367-0": { name: "history of tobacco use", field: "tobacco_use", typed: false },
  "11331-6": { name: "history of alcohol use", field: "alcohol_use", typed: false },
  "74013-4": { name: "alcoholic drinks per day", field: "alcohol_drinks_per_day", typed: false },
};

/**
 * Standard instruments by their LOINC panel code, with the LOINC code of the item that
 * carries their total score and the highest total the instrument allows.
 */
export const INSTRUMENTS: Readonly<Record<string, { instrument_id: string; total: string; total_max: number }>> = {
  "44249-1": { instrument_id: "PHQ-9", total: "44261-6", total_max: 27 },
  "55757-9": { instrument_id: "PHQ-2", total: "55758-7", total_max: 6 },
  "69737-5": { instrument_id: "GAD-7", total: "70274-6", total_max: 21 },
};

/** The LOINC answer list of PHQ and GAD items ("over the last 2 weeks, how often"), with each answer's score. */
export const ANSWER_SCORES: Readonly<Record<string, number>> = {
  "LA6568-5": 0, // Not at all
  "LA6569-3": 1, // Several days
  "LA6570-1": 2, // More than half the days
  "LA6571-9": 3, // Nearly every day
};

/** Report codes that name an imaging study (LOINC's radiology part, and the generic study code). */
export const IMAGING_REPORTS: ReadonlySet<string> = new Set(["LP29684-5", "18748-4"]);

export const vitalCodes = (): string[] => [...Object.keys(VITAL_PANELS), ...Object.keys(VITAL_SIGNS)];

import type { Static, TNumber } from "@sinclair/typebox";
import { entry, eachItem, issue, type CatalogEntry, type PayloadIssue } from "../issues.js";
import type { LOG_GROUPS } from "../log-types.js";
import {
  Amount, Bool, Clinician, DateOrDateTimeStr, DateStr, DateTimeStr, Entries, Enum, Extensions, Nullable, Num, Obj, Opt, Percent,
  ReqStr, Source, Str, extensible,
} from "./common.js";
import { designedLabClinicalEntries } from "./lab-clinical-design.js";

const NoPlaceholder = (bound: string) =>
  Opt(Num({ description: `${bound} of the reference range. Omit entirely when unknown: never null, never 0 as a placeholder.` }));

const LabResult = Obj({
  loinc_code: Opt(Str({ description: "Preferred; test_name and specimen_type are resolved server side when given" })),
  test_name: Opt(Str({ description: "Required when loinc_code is absent" })),
  specimen_type: Opt(Str({ description: "For example blood, urine, serum; helps best-effort LOINC mapping" })),
  test_category: Opt(Enum(["hematology", "metabolic", "lipid", "oncology_marker", "cardiac", "diabetes", "renal", "hepatic", "other"])),
  value_numeric: Opt(Num()),
  value_string: Opt(Str({ description: "Non-numeric results" })),
  unit: Str({ description: "Always required: the lab's actual unit" }),
  abnormal_flag: Opt(Enum(["H", "L", "N", "HH", "LL"], { description: "HH critical high, LL critical low" })),
  reference_range_low: NoPlaceholder("Low end"),
  reference_range_high: NoPlaceholder("High end; not below reference_range_low"),
  result_status: Opt(Enum(["final", "preliminary", "corrected"])),
});

export const LabResults = Obj({
  panel_loinc_code: Opt(Nullable(Str())),
  panel_name: Opt(Nullable(Str())),
  collection_datetime: Opt(DateTimeStr()),
  ordered_by_npi: Opt(Nullable(Str())),
  performing_lab: Opt(Nullable(Obj({ name: Opt(Str()), clia_number: Opt(Str()) }))),
  results: Entries(LabResult),
  ...extensible,
});

export function refineLabResults(p: Static<typeof LabResults>): PayloadIssue[] {
  return eachItem(p.results, ["results"], (r, path) => {
    const out: PayloadIssue[] = [];
    if (!r.loinc_code && !r.test_name) {
      out.push(issue([...path, "test_name"], "is required when loinc_code is absent", r.test_name));
    }
    const { reference_range_low: low, reference_range_high: high } = r;
    if (low !== undefined && high !== undefined && low > high) {
      out.push(issue([...path, "reference_range_high"], `reference_range_high ${high} is below reference_range_low ${low}`, high));
    }
    return out;
  });
}

// Pressures, rates, masses and a body temperature in Celsius are never negative, as
// weight_measurement and the device types already hold; null still means not measured.
const Vital = (bounds: TNumber = Amount()) => Opt(Nullable(bounds));
const Measurements = Obj(
  {
    systolic_bp_mmhg: Vital(),
    diastolic_bp_mmhg: Vital(),
    heart_rate_bpm: Vital(),
    spo2_percent: Vital(Percent()),
    weight_kg: Vital(),
    temperature_celsius: Vital(),
    respiratory_rate_bpm: Vital(),
  },
  { description: "The vital type is inferred from the populated fields, so at least one must hold a number." },
);

export const VitalsMeasurement = Obj({
  measurements: Measurements,
  context: Obj({
    position: Opt(Nullable(Enum(["sitting", "standing", "supine"]))),
    fasting: Opt(Nullable(Bool())),
  }),
  source: Source,
  collection_datetime: Nullable(DateTimeStr(), { description: "ISO 8601 UTC; required, null when unknown" }),
  extensions: Opt(Extensions),
});

export function refineVitals(p: Static<typeof VitalsMeasurement>): PayloadIssue[] {
  const populated = Object.keys(Measurements.properties).some((k) => typeof (p.measurements as Record<string, unknown>)[k] === "number");
  return populated ? [] : [issue(["measurements"], "must hold at least one measurement with a number", p.measurements)];
}

export const ClinicalNote = Obj({
  note_type: Enum([
    "progress_note", "history_and_physical", "social_history", "family_history", "medical_history", "surgical_history",
    "psychosocial_history", "financial_history", "discharge_summary", "consultation_note", "other",
  ]),
  loinc_code: Opt(Str({ description: "Recommended codes include 11506-3, 34117-2, 11488-4, 18842-5" })),
  authored_by: Opt(Clinician),
  authored_date: Opt(DateStr()),
  encounter_id: Opt(Str({ description: "Links to a care_encounter" })),
  source: Source,
  sections: Entries(Obj({ section_label: ReqStr(), content: ReqStr() })),
  extensions: Opt(Extensions),
});

export const ClinicalFinding = Obj({
  findings: Entries(
    Obj({
      description: ReqStr(),
      body_site: Opt(Str()),
      severity: Opt(Str()),
      negation: Opt(Bool({ description: "true when the finding is explicitly absent" })),
      recorded_at: Opt(DateOrDateTimeStr()),
      extensions: Opt(Extensions),
    }),
  ),
  ...extensible,
});

export const ProcedureResult = Obj({
  results: Entries(
    Obj({
      result_type: Enum(["pathology", "procedure"]),
      loinc_code: Opt(Str()),
      test_name: ReqStr(),
      value_string: Opt(Str()),
      value_numeric: Opt(Num()),
      unit: Opt(Str()),
      specimen_site: Opt(Str()),
      procedure_code: Opt(Str({ description: "CPT or similar" })),
      status: Opt(Str({ description: "For example final, preliminary" })),
      performed_at: Opt(DateTimeStr()),
    }),
  ),
  collection_datetime: Opt(DateTimeStr()),
  ...extensible,
});

export const GenomicVariant = Obj({
  variants: Entries(
    Obj({
      gene: ReqStr(),
      variant_designation: Opt(Str()),
      variant_type: Opt(Str({ description: "For example missense, deletion, insertion" })),
      classification: Opt(Str({ description: "For example pathogenic, likely_pathogenic, VUS" })),
      actionability: Opt(Str()),
      reported_at: Opt(DateTimeStr()),
      extensions: Opt(Extensions),
    }),
  ),
  ...extensible,
});

export const ImagingResult = Obj({
  findings: Entries(
    Obj({
      modality: ReqStr({ description: "For example CT, MRI, PET" }),
      body_region: Opt(Str()),
      impression: Opt(Str()),
      finding_description: Opt(Str()),
      performed_at: Opt(DateOrDateTimeStr()),
      extensions: Opt(Extensions),
    }),
  ),
  study_date: Opt(DateStr()),
  ...extensible,
});

export const ClinicalMeasurement = Obj(
  {
    measurements: Entries(
      Obj({
        measurement_type: ReqStr({ description: "For example ejection_fraction, tumour_diameter, bmi, qtc" }),
        value_numeric: Opt(Num()),
        value_string: Opt(Str()),
        unit: Opt(Str()),
        code_system: Opt(Str()),
        code: Opt(Str()),
        body_site: Opt(Str()),
        measured_at: Opt(DateTimeStr()),
      }),
    ),
    ...extensible,
  },
  { description: "Non-lab exam, imaging or procedure values. Lab results use lab_results instead." },
);

export const TreatmentResponseAssessment = Obj({
  assessments: Entries(
    Obj({
      treatment_description: Opt(Str()),
      response_category: ReqStr({ description: "For example CR, PR, SD, PD" }),
      assessment_method: Opt(Str({ description: "For example RECIST 1.1, PERCIST, iRECIST" })),
      reference_date: Opt(DateOrDateTimeStr({ description: "Baseline or comparison date the response is measured against" })),
    }),
  ),
  ...extensible,
});

export const labClinicalEntries = {
  lab_results: entry(LabResults, refineLabResults),
  vitals_measurement: entry(VitalsMeasurement, refineVitals),
  clinical_note: entry(ClinicalNote),
  clinical_finding: entry(ClinicalFinding),
  procedure_result: entry(ProcedureResult),
  genomic_variant: entry(GenomicVariant),
  imaging_result: entry(ImagingResult),
  clinical_measurement: entry(ClinicalMeasurement),
  treatment_response_assessment: entry(TreatmentResponseAssessment),
  ...designedLabClinicalEntries,
} satisfies Record<(typeof LOG_GROUPS)["lab_clinical"][number], CatalogEntry>;

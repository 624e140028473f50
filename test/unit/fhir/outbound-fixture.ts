import { log, given } from "../readmodels/given.js";
import type { OutboundInput } from "../../../fhir/outbound/index.js";

/** A patient with one of everything the summary maps, each log with a known id. */
export const LOGS = [
  log("demographics", "2026-01-05T09:00:00Z", {
    name: "Ada Lovelace", dob: "1980-12-10", sex: "female", marital_status: "married", language: "en-GB",
    address: { street: "12 St James's Square", city: "London", zip: "SW1Y 4JH", country: "GB" },
    telecom: [{ system: "phone", value: "+44 20 7946 0000", use: "mobile", rank: 1 }, { system: "email", value: "ada@example.org" }],
    identifiers: [{ system: "urn:oid:2.16.840.1.113883.2.1.4.1", value: "943 476 5919", type: "NHS" }],
  }, "log_demo"),
  log("condition", "2026-01-06T09:00:00Z", {
    disease_type: "Type 2 diabetes mellitus", snomed_code: "44054006", icd10_codes: ["E11.9"], clinical_status: "active",
    stage: "uncomplicated", onset_date: "2019-04-01", diagnosis_date: "2019-05-02T10:00:00Z", recorded_at: "2026-01-06",
  }, "log_cond"),
  log("condition", "2026-01-06T09:05:00Z", { disease_type: "Wrong entry", clinical_status: "entered_in_error" }, "log_cond_err"),
  log("allergy_intolerance", "2026-01-06T10:00:00Z", {
    allergies: [{ allergen: "Penicillin", snomed_code: "91936005", category: "medication", criticality: "high", clinical_status: "active", reactions: ["hives", "wheezing"], recorded_date: "2020-02-01" }],
  }, "log_allergy"),
  log("medication_list_update", "2026-01-07T08:00:00Z", {
    medications: [{ action: "add", medication_name: "Metformin", rxnorm_cui: "860975", ndc_code: "0093-1048-01", dose: "500 mg", frequency: "BID", route: "oral", form: "tablet", start_date: "2019-05-02", schedule_times: ["08:00", "20:00"], therapeutic_class: "biguanide", prescribed_by: { name: "Dr. Grace Hopper", npi: "1234567893" } }],
  }, "log_med"),
  log("immunization", "2026-01-08T11:00:00Z", {
    vaccine_name: "Influenza, seasonal, injectable", cvx_code: "141", status: "completed", occurrence_date: "2025-10-15", dose_number: 1, lot_number: "FL-2025-77", manufacturer: "Seqirus", site: "left_deltoid", route: "intramuscular",
  }, "log_imm"),
  log("procedure", "2026-01-09T12:00:00Z", {
    procedure_name: "Colonoscopy", procedure_code: "45378", code_system: "CPT", status: "completed", performed_date: "2025-11-20", body_site: "colon", outcome: "No polyps", reason: "Screening",
  }, "log_proc"),
  log("lab_results", "2026-01-10T07:00:00Z", {
    collection_datetime: "2026-01-10T07:00:00Z",
    results: [{ loinc_code: "4548-4", test_name: "Hemoglobin A1c", value_numeric: 7.4, unit: "%", reference_range_low: 4, reference_range_high: 5.6, result_status: "final", specimen_type: "blood" }],
  }, "log_lab1"),
  log("lab_results", "2026-02-10T07:00:00Z", {
    collection_datetime: "2026-02-10T07:00:00Z",
    results: [{ loinc_code: "4548-4", test_name: "Hemoglobin A1c", value_numeric: 6.9, unit: "%", reference_range_low: 4, reference_range_high: 5.6, abnormal_flag: "H", result_status: "preliminary" }],
  }, "log_lab2"),
  log("vitals_measurement", "2026-01-11T09:00:00Z", {
    measurements: { systolic_bp_mmhg: 132, diastolic_bp_mmhg: 84, heart_rate_bpm: 71 }, context: { position: "sitting" }, source: "clinic", collection_datetime: "2026-01-11T09:00:00Z",
  }, "log_vitals"),
  log("weight_measurement", "2026-01-12T07:30:00Z", { weight_kg: 68.2, bmi: 24.1 }, "log_weight"),
];

export const PATIENT: OutboundInput["patient"] = {
  id: "pat_1", first_name: "Ada", last_name: "Lovelace", email: null, phone_number: null, date_of_birth: null, sex: null,
  external_identifiers: [{ system: "mrn", value: "MRN-0042" }],
};

export const input = (logs = LOGS): OutboundInput => ({ state: given(logs), patient: PATIENT });

/** A resource as JSON, its patient reference still to be set. */
export type RawResource = { resourceType: string; id: string; [element: string]: unknown };

/**
 * The resources bench/fhir.ts sends, in turn: what an EHR export holds most of (vital
 * signs, labs, conditions, medications), each made different by `n` so that none is a
 * duplicate of another. The patient reference is set by the caller.
 */
/** Event times rising with `n`, as a live feed sends them (late logs cost a patient's replay: bench:ingest's mix rises too). */
const day = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString().replace(".000Z", "Z");
const cc = (system: string, code: string, display: string) => ({ coding: [{ system, code, display }], text: display });
const LOINC = "http://loinc.org";
const SNOMED = "http://snomed.info/sct";
const category = (code: string) => [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/observation-category", code }] }];

export const FHIR_MIX: ((id: string, n: number) => RawResource)[] = [
  (id, n) => ({
    resourceType: "Observation", id, status: "final", category: category("vital-signs"), code: cc(LOINC, "85354-9", "Blood pressure panel"), effectiveDateTime: day(n),
    component: [
      { code: cc(LOINC, "8480-6", "Systolic blood pressure"), valueQuantity: { value: 110 + (n % 40), unit: "mmHg", system: "http://unitsofmeasure.org", code: "mm[Hg]" } },
      { code: cc(LOINC, "8462-4", "Diastolic blood pressure"), valueQuantity: { value: 70 + (n % 20), unit: "mmHg", system: "http://unitsofmeasure.org", code: "mm[Hg]" } },
    ],
  }),
  (id, n) => ({ resourceType: "Observation", id, status: "final", category: category("vital-signs"), code: cc(LOINC, "8867-4", "Heart rate"), effectiveDateTime: day(n), valueQuantity: { value: 55 + (n % 50), unit: "/min", system: "http://unitsofmeasure.org", code: "/min" } }),
  (id, n) => ({
    resourceType: "Observation", id, status: "final", category: category("laboratory"), code: cc(LOINC, "2345-7", "Glucose [Mass/volume] in Serum or Plasma"), effectiveDateTime: day(n),
    valueQuantity: { value: 70 + (n % 90), unit: "mg/dL", system: "http://unitsofmeasure.org", code: "mg/dL" },
    referenceRange: [{ low: { value: 70, unit: "mg/dL" }, high: { value: 99, unit: "mg/dL" } }],
  }),
  (id, n) => ({
    resourceType: "Condition", id, clinicalStatus: cc("http://terminology.hl7.org/CodeSystem/condition-clinical", "active", "Active"),
    code: cc(SNOMED, String(44054006 + (n % 7)), `Condition ${n % 7}`), onsetDateTime: day(n).slice(0, 10), recordedDate: day(n),
  }),
  (id, n) => ({
    resourceType: "MedicationStatement", id, status: "active", medicationCodeableConcept: cc("http://www.nlm.nih.gov/research/umls/rxnorm", String(860975 + (n % 5)), `Medication ${n % 5} 500 MG Oral Tablet`),
    effectiveDateTime: day(n), dosage: [{ text: "one tablet twice daily", timing: { repeat: { frequency: 2, period: 1, periodUnit: "d" } } }],
  }),
  (id, n) => ({
    resourceType: "AllergyIntolerance", id, clinicalStatus: cc("http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical", "active", "Active"),
    code: cc(SNOMED, String(227493005 + (n % 3)), `Allergen ${n % 3}`), recordedDate: day(n), reaction: [{ manifestation: [cc(SNOMED, "39579001", "Anaphylaxis")] }],
  }),
  (id, n) => ({ resourceType: "Immunization", id, status: "completed", vaccineCode: cc("http://hl7.org/fhir/sid/cvx", String(140 + (n % 5)), `Vaccine ${n % 5}`), occurrenceDateTime: day(n), patient: { reference: "Patient/x" } }),
  (id, n) => ({ resourceType: "Procedure", id, status: "completed", code: cc(SNOMED, String(80146002 + (n % 4)), `Procedure ${n % 4}`), performedDateTime: day(n), subject: { reference: "Patient/x" } }),
];

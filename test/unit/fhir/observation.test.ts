import { describe, expect, it } from "vitest";
import type { Device, Observation } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";

const LOINC = "http://loinc.org";
const UCUM = "http://unitsofmeasure.org";
const category = (code: string) => [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/observation-category", code }] }];
const loinc = (code: string, display?: string) => ({ coding: [{ system: LOINC, code, ...(display ? { display } : {}) }] });

/** After the R4 specification's blood-pressure example (written anew): a panel with two components, a body position. */
const bloodPressure: Observation = {
  resourceType: "Observation",
  id: "bp-7",
  status: "final",
  category: category("vital-signs"),
  code: { ...loinc("85354-9", "Blood pressure panel with all children optional"), text: "Blood pressure" },
  subject: { reference: "Patient/p1" },
  effectiveDateTime: "2025-11-03T08:40:00+01:00",
  performer: [{ reference: "Practitioner/nurse-2", display: "Nurse Okafor" }],
  extension: [{ url: "http://hl7.org/fhir/StructureDefinition/observation-bodyPosition", valueCodeableConcept: { coding: [{ system: "http://snomed.info/sct", code: "33586001" }] } }],
  component: [
    { code: loinc("8480-6", "Systolic blood pressure"), valueQuantity: { value: 128, unit: "mmHg", system: UCUM, code: "mm[Hg]" } },
    { code: loinc("8462-4", "Diastolic blood pressure"), valueQuantity: { value: 81, unit: "mmHg", system: UCUM, code: "mm[Hg]" } },
  ],
};

const vital = (code: string, value: number, unit: string, id = `v-${code}`): Observation => ({
  resourceType: "Observation", id, status: "final", category: category("vital-signs"), code: loinc(code),
  effectiveDateTime: "2025-11-03T09:00:00Z", valueQuantity: { value, unit, system: UCUM, code: unit },
});

/** After the R4 specification's serum creatinine example (written anew). */
const creatinine: Observation = {
  resourceType: "Observation",
  id: "cr-1",
  status: "final",
  category: category("laboratory"),
  code: { coding: [{ system: LOINC, code: "2160-0", display: "Creatinine [Mass/volume] in Serum or Plasma" }], text: "Creatinine" },
  effectiveDateTime: "2025-10-28T07:15:00Z",
  issued: "2025-10-28T11:02:00Z",
  valueQuantity: { value: 1.6, unit: "mg/dL", system: UCUM, code: "mg/dL" },
  interpretation: [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation", code: "H" }] }],
  referenceRange: [{ low: { value: 0.6, unit: "mg/dL" }, high: { value: 1.2, unit: "mg/dL" } }],
  specimen: { display: "Serum" },
  performer: [{ reference: "Organization/lab-north", display: "North Labs" }],
};

describe("Observation: vital signs", () => {
  it("makes a blood-pressure panel one vitals_measurement with both pressures, its position and who measured", () => {
    const [log, ...rest] = derived(bloodPressure);
    expect(rest).toEqual([]);
    expect(log).toMatchObject({
      log_type: "vitals_measurement",
      timestamp: "2025-11-03T08:40:00+01:00",
      payload: {
        measurements: { systolic_bp_mmhg: 128, diastolic_bp_mmhg: 81 },
        context: { position: "sitting", fasting: null },
        source: { type: "clinician", name: "Nurse Okafor" },
        collection_datetime: "2025-11-03T08:40:00+01:00",
      },
      trace: { object_type: "Observation", object_id: "bp-7" },
    });
    const vitals = folded("vitals", [log!]);
    expect(vitals.latest.systolic_bp_mmhg).toMatchObject({ value: 128, timestamp: "2025-11-03T07:40:00.000Z" });
    expect(vitals.latest.diastolic_bp_mmhg?.value).toBe(81);
  });

  it("reads each single vital by its LOINC code, converting to the catalog's units", () => {
    const cases: [Observation, string, number][] = [
      [vital("8867-4", 72, "/min"), "heart_rate_bpm", 72],
      [vital("9279-1", 16, "/min"), "respiratory_rate_bpm", 16],
      [vital("8310-5", 100.4, "[degF]"), "temperature_celsius", 38],
      [vital("59408-5", 97, "%"), "spo2_percent", 97],
      [vital("2708-6", 95, "%"), "spo2_percent", 95],
      [vital("29463-7", 176, "[lb_av]"), "weight_kg", 79.83],
      [vital("8480-6", 141, "mm[Hg]"), "systolic_bp_mmhg", 141],
    ];
    for (const [obs, key, value] of cases) expect(derived(obs)[0]!.payload.measurements, obs.code.coding![0]!.code).toEqual({ [key]: value });
  });

  it("puts height and BMI, which the vitals have no key for, in clinical_measurement", () => {
    const [height] = derived(vital("8302-2", 1.74, "m"));
    expect(height).toMatchObject({
      log_type: "clinical_measurement",
      payload: { measurements: [{ measurement_type: "body_height", value_numeric: 174, unit: "cm", code_system: "LOINC", code: "8302-2" }] },
    });
    const bmi = derived(vital("39156-5", 26.4, "kg/m2"));
    const context = folded("clinical_context", [height!, ...bmi]);
    expect(context.measurements.map((m) => [m.measurement_type, m.latest.value_numeric])).toEqual(expect.arrayContaining([["body_height", 174], ["bmi", 26.4]]));
  });

  it("refuses a unit it cannot convert, at the quantity's code, naming the units it reads", () => {
    const out = refused(vital("8867-4", 1.2, "Hz"));
    expect(out.issues[0]).toMatchObject({ path: ["valueQuantity", "code"], message: expect.stringMatching(/Hz .*\/min/) });
  });

  it("refuses an entered-in-error vital or lab result, saying nothing was removed and how a wrong value is replaced", () => {
    const vitalOut = refused({ ...vital("8867-4", 72, "/min"), status: "entered-in-error" });
    expect(vitalOut).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["status"] }] });
    expect(vitalOut.issues[0]!.message).toBe(
      "is entered-in-error, which the patient's logs cannot record: nothing was stored or removed. To fix a wrong value, send the right measurement " +
      "for the same code and effective time with status corrected: it replaces the wrong one; a result that should not have been sent at all cannot be withdrawn",
    );
    expect(refused({ ...creatinine, status: "entered-in-error" }).issues[0]!.message).toMatch(/nothing was stored or removed.*the right result for the same test and effective time with status corrected/);
    expect(refused({ ...vital("8867-4", 72, "/min"), status: "cancelled" }).issues[0]).toMatchObject({ path: ["status"], message: "is cancelled: only results with status final, preliminary, amended, corrected are kept" });
  });
});

describe("Observation: laboratory", () => {
  it("becomes lab_results with value, unit, range, flag, specimen and the lab, and lands among the abnormal results", () => {
    const [log] = derived(creatinine);
    expect(log).toMatchObject({
      log_type: "lab_results",
      timestamp: "2025-10-28T07:15:00Z",
      payload: {
        collection_datetime: "2025-10-28T07:15:00Z",
        performing_lab: { name: "North Labs" },
        results: [{
          loinc_code: "2160-0", test_name: "Creatinine", value_numeric: 1.6, unit: "mg/dL", abnormal_flag: "H",
          reference_range_low: 0.6, reference_range_high: 1.2, specimen_type: "Serum", result_status: "final",
        }],
      },
    });
    const labs = folded("lab_results", [log!]);
    expect(labs.results[0]).toMatchObject({ loinc_code: "2160-0", latest: { value_numeric: 1.6, abnormal_flag: "H" } });
    expect(labs.abnormal).toMatchObject([{ loinc_code: "2160-0", abnormal_flag: "H", critical: false }]);
  });

  it("keeps a coded qualitative result as text, amended as corrected", () => {
    const culture: Observation = {
      resourceType: "Observation", id: "ucx", status: "amended", category: category("laboratory"), code: loinc("630-4", "Bacteria identified in Urine by Culture"),
      valueCodeableConcept: { coding: [{ system: "http://snomed.info/sct", code: "264868006", display: "No growth" }] },
    };
    expect(derived(culture)[0]!.payload.results).toEqual([
      { loinc_code: "630-4", test_name: "Bacteria identified in Urine by Culture", value_string: "No growth", unit: "", result_status: "corrected" },
    ]);
  });

  it("keeps a bounded result (<, >) as text, not as the bound's number", () => {
    const troponin = { ...creatinine, code: loinc("6598-7", "Troponin T"), valueQuantity: { value: 0.01, comparator: "<" as const, unit: "ng/mL" } };
    expect(derived(troponin)[0]!.payload.results).toMatchObject([{ value_string: "<0.01", unit: "ng/mL" }]);
  });

  it("reads interpretation A (abnormal, no direction) as no flag: the range judges the value, and without one it is unflagged", () => {
    const abnormal = { ...creatinine, interpretation: [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation", code: "A" }] }] };
    const [withRange] = derived(abnormal);
    expect(withRange!.payload.results).toEqual([expect.not.objectContaining({ abnormal_flag: expect.anything() })]);
    expect(folded("lab_results", [withRange!]).results[0]!.latest).toMatchObject({ abnormal_flag: "H", flag_source: "own_range" });
    const { referenceRange: _r, ...bare } = abnormal;
    expect(folded("lab_results", derived(bare)).results[0]!.latest.abnormal_flag).toBeNull();
  });

  it("takes a LOINC-coded result without a category as a lab result", () => {
    const { category: _c, ...bare } = creatinine;
    expect(derived(bare)[0]!.log_type).toBe("lab_results");
  });

  it("refuses a result that is absent, at its dataAbsentReason", () => {
    const { valueQuantity: _v, interpretation: _i, ...absent } = creatinine;
    const out = refused({ ...absent, dataAbsentReason: { text: "Specimen haemolysed" } });
    expect(out.issues[0]).toMatchObject({ path: ["dataAbsentReason"], message: expect.stringMatching(/haemolysed/) });
  });
});

describe("Observation: device glucose, social history, categories without a home", () => {
  const sensor: Device = { resourceType: "Device", id: "cgm-1", manufacturer: "Dexcom" };
  const reading: Observation = {
    resourceType: "Observation", id: "g-1", status: "final", category: category("laboratory"), code: loinc("15074-8", "Glucose [Moles/volume] in Blood"),
    effectiveDateTime: "2025-11-04T06:05:00Z", valueQuantity: { value: 4.2, unit: "mmol/L", system: UCUM, code: "mmol/L" }, device: { reference: "Device/cgm-1" },
  };

  it("makes a blood glucose from a device a cgm_reading in mg/dL, folded into the glucose module", () => {
    const [log] = derived(reading, sensor);
    expect(log).toMatchObject({ log_type: "cgm_reading", payload: { glucose_mg_dl: 75.7, sensor_timestamp: "2025-11-04T06:05:00Z", device_provider: "Dexcom" } });
    expect(folded("glucose", [log!]).recent[0]).toMatchObject({ glucose_mg_dl: 75.7, glucose_flag: "normal" });
    const { device: _d, ...drawn } = reading;
    expect(derived(drawn)[0]!.log_type).toBe("lab_results");
  });

  it("puts housing status in social_determinants and smoking status, which has no field, in its extensions", () => {
    const housing: Observation = {
      resourceType: "Observation", id: "sh-1", status: "final", category: category("social-history"), code: loinc("71802-3", "Housing status"),
      valueCodeableConcept: { coding: [{ system: LOINC, code: "LA31993-1", display: "I have housing" }] }, effectiveDateTime: "2025-09-01",
    };
    const smoking: Observation = {
      resourceType: "Observation", id: "sh-2", status: "final", category: category("social-history"), code: loinc("72166-2", "Tobacco smoking status"),
      valueCodeableConcept: { coding: [{ system: "http://snomed.info/sct", code: "8517006", display: "Ex-smoker" }] }, effectiveDateTime: "2025-09-01",
    };
    const logs = [...derived(housing), ...derived(smoking)];
    expect(logs.map((l) => l.payload)).toEqual([{ housing_stability: "I have housing" }, { extensions: { tobacco_smoking_status: "Ex-smoker" } }]);
    expect(folded("social", logs)).toMatchObject({ housing_stability: "I have housing", extensions: { tobacco_smoking_status: "Ex-smoker" } });
  });

  it("refuses a survey observation, naming the categories and codes that are mapped", () => {
    const survey: Observation = { resourceType: "Observation", id: "s-1", status: "final", category: category("survey"), code: { text: "How are you feeling?" }, valueString: "Tired" };
    const out = refused(survey);
    expect(out.code).toBe("fhir_unmappable");
    expect(out.issues[0]!.path).toEqual(["category"]);
    expect(out.message).toMatch(/survey has no place.*vital-signs \(LOINC 85354-9.*laboratory.*social-history.*QuestionnaireResponse/);
  });

  it("refuses a vital-signs observation whose code is not in the table", () => {
    expect(refused({ ...vital("8478-0", 93, "mm[Hg]") }).issues[0]).toMatchObject({ path: ["code"], message: expect.stringMatching(/not a vital sign/) });
  });
});

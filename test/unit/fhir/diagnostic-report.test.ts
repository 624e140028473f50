import { describe, expect, it } from "vitest";
import type { DiagnosticReport, ImagingStudy, Observation } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";

const LOINC = "http://loinc.org";
const UCUM = "http://unitsofmeasure.org";
const v2section = (code: string) => [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/v2-0074", code }] }];

const result = (id: string, code: string, name: string, value: number, unit: string, low: number, high: number, flag?: string): Observation => ({
  resourceType: "Observation",
  id,
  status: "final",
  code: { coding: [{ system: LOINC, code, display: name }] },
  effectiveDateTime: "2025-10-02T07:30:00Z",
  valueQuantity: { value, unit, system: UCUM, code: unit },
  referenceRange: [{ low: { value: low, unit }, high: { value: high, unit } }],
  ...(flag ? { interpretation: [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation", code: flag }] }] } : {}),
});

/** After the R4 specification's complete blood count report (written anew): results contained in the report. */
const hemoglobin = result("hb", "718-7", "Hemoglobin [Mass/volume] in Blood", 10.9, "g/dL", 12, 16, "L");
const leukocytes = result("wbc", "6690-2", "Leukocytes [#/volume] in Blood by Automated count", 7.4, "10*3/uL", 4, 11);
const bloodCount: DiagnosticReport = {
  resourceType: "DiagnosticReport",
  id: "cbc-2025-10",
  contained: [hemoglobin, leukocytes],
  status: "final",
  category: v2section("HM"),
  code: { coding: [{ system: LOINC, code: "58410-2", display: "CBC panel - Blood by Automated count" }], text: "Complete blood count" },
  effectiveDateTime: "2025-10-02T07:30:00Z",
  issued: "2025-10-02T12:00:00Z",
  performer: [{ reference: "Organization/city-lab", display: "City Hospital Laboratory" }],
  result: [{ reference: "#hb" }, { reference: "#wbc" }],
};

/** After the R4 specification's lipid profile report: results sent as other entries of the Bundle. */
const ldl = result("ldl-9", "13457-7", "Cholesterol in LDL [Mass/volume] in Serum or Plasma by calculation", 162, "mg/dL", 0, 130, "H");
const hdl = result("hdl-9", "2085-9", "Cholesterol in HDL [Mass/volume] in Serum or Plasma", 48, "mg/dL", 40, 90);
const lipids: DiagnosticReport = {
  resourceType: "DiagnosticReport",
  id: "lipids-9",
  status: "final",
  category: [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/v2-0074", code: "LAB" }] }],
  code: { coding: [{ system: LOINC, code: "57698-3", display: "Lipid panel with direct LDL" }] },
  effectiveDateTime: "2025-10-20T08:10:00-04:00",
  result: [{ reference: "Observation/ldl-9" }, { reference: "Observation/hdl-9" }],
};

/** After the R4 specification's CT report: a conclusion and a coded impression. */
const chestCt: DiagnosticReport = {
  resourceType: "DiagnosticReport",
  id: "ct-44",
  status: "final",
  category: [{ coding: [{ system: "http://loinc.org", code: "LP29684-5", display: "Radiology" }] }],
  code: { coding: [{ system: LOINC, code: "24627-2", display: "Chest CT" }], text: "CT Chest with contrast" },
  effectiveDateTime: "2025-09-12T14:20:00Z",
  conclusion: "Stable 6 mm nodule in the right upper lobe; no new lesions.",
  conclusionCode: [{ coding: [{ system: "http://snomed.info/sct", code: "427359005", display: "Solitary nodule of lung" }] }],
};

describe("DiagnosticReport: laboratory", () => {
  it("makes a report with contained results one lab_results log with the panel and every result", () => {
    const [log, ...rest] = derived(bloodCount, hemoglobin, leukocytes);
    expect(rest).toEqual([]);
    expect(log).toMatchObject({
      log_type: "lab_results",
      timestamp: "2025-10-02T07:30:00Z",
      payload: {
        panel_loinc_code: "58410-2", panel_name: "Complete blood count", collection_datetime: "2025-10-02T07:30:00Z",
        performing_lab: { name: "City Hospital Laboratory" },
        results: [
          { loinc_code: "718-7", value_numeric: 10.9, unit: "g/dL", abnormal_flag: "L", reference_range_low: 12, reference_range_high: 16, result_status: "final" },
          { loinc_code: "6690-2", value_numeric: 7.4, unit: "10*3/uL", reference_range_low: 4, reference_range_high: 11 },
        ],
      },
      trace: { object_type: "DiagnosticReport", object_id: "cbc-2025-10" },
    });
    const labs = folded("lab_results", [log!]);
    expect(labs.results.map((r) => [r.loinc_code, r.latest.value_numeric, r.latest.abnormal_flag])).toEqual([["718-7", 10.9, "L"], ["6690-2", 7.4, "N"]]);
    expect(labs.abnormal).toMatchObject([{ loinc_code: "718-7", abnormal_flag: "L" }]);
  });

  it("reads results referenced as other entries of the same Bundle", () => {
    const [log] = derived(lipids, ldl, hdl);
    expect(log!.payload).toMatchObject({
      panel_loinc_code: "57698-3", panel_name: "Lipid panel with direct LDL", collection_datetime: "2025-10-20T08:10:00-04:00",
      results: [{ loinc_code: "13457-7", value_numeric: 162, abnormal_flag: "H" }, { loinc_code: "2085-9", value_numeric: 48 }],
    });
    expect(folded("lab_results", [log!]).abnormal).toMatchObject([{ loinc_code: "13457-7", abnormal_flag: "H" }]);
  });

  it("reads a result that is itself a panel through its members", () => {
    const panel: Observation = { resourceType: "Observation", id: "lp", status: "final", code: { text: "Lipids" }, hasMember: [{ reference: "Observation/ldl-9" }, { reference: "Observation/hdl-9" }] };
    const [log] = derived({ ...lipids, result: [{ reference: "Observation/lp" }] }, panel, ldl, hdl);
    expect((log!.payload.results as unknown[]).length).toBe(2);
  });

  it("refuses a result it cannot resolve, at the reference, saying to contain it or send it in the Bundle", () => {
    const out = refused(lipids, ldl);
    expect(out.code).toBe("fhir_unmappable");
    expect(out.issues).toEqual([{ path: ["result", 1, "reference"], message: expect.stringMatching(/Observation\/hdl-9 is neither contained.*same Bundle/) }]);
  });

  it("locates a result that has no value through the report's result list", () => {
    const { valueQuantity: _v, referenceRange: _r, ...empty } = hdl;
    const out = refused(lipids, ldl, { ...empty, dataAbsentReason: { text: "Not performed" } });
    expect(out.issues[0]!.path).toEqual(["result", 1, "dataAbsentReason"]);
  });

  it("refuses a cancelled report", () => {
    expect(refused({ ...lipids, status: "cancelled" }, ldl, hdl).issues[0]!.path).toEqual(["status"]);
  });
});

describe("DiagnosticReport: imaging", () => {
  it("makes a radiology report an imaging_result with the modality, impression and study date, kept in the clinical context", () => {
    const [log] = derived(chestCt);
    expect(log).toMatchObject({
      log_type: "imaging_result",
      payload: {
        study_date: "2025-09-12",
        findings: [{
          modality: "CT", impression: "Stable 6 mm nodule in the right upper lobe; no new lesions.",
          finding_description: "Solitary nodule of lung", performed_at: "2025-09-12T14:20:00Z",
        }],
      },
    });
    expect(folded("clinical_context", [log!]).imaging).toMatchObject([{ modality: "CT", study_date: "2025-09-12", impression: expect.stringMatching(/nodule/) }]);
  });

  it("takes the modality from the imaging study, and reads a report with a conclusion only as imaging", () => {
    const study: ImagingStudy = { resourceType: "ImagingStudy", id: "st-1", status: "available", subject: { reference: "Patient/p1" }, modality: [{ system: "http://dicom.nema.org/resources/ontology/DCM", code: "MR" }] };
    const brain: DiagnosticReport = {
      resourceType: "DiagnosticReport", id: "mr-1", status: "final", code: { text: "Brain imaging" }, effectiveDateTime: "2025-08-01",
      imagingStudy: [{ reference: "ImagingStudy/st-1" }], conclusion: "No acute intracranial abnormality.",
    };
    expect(derived(brain, study)[0]!.payload.findings).toMatchObject([{ modality: "MRI", impression: "No acute intracranial abnormality." }]);
  });

  it("refuses an imaging report that does not name its modality, saying where to", () => {
    const out = refused({ ...chestCt, code: { text: "Imaging study" }, category: v2section("RAD") });
    expect(out.issues[0]).toMatchObject({ path: ["code", "text"], message: expect.stringMatching(/modality/) });
  });

  it("refuses a laboratory report without results", () => {
    const { result: _r, ...bare } = lipids;
    expect(refused(bare).issues[0]).toMatchObject({ path: ["result"], message: expect.stringMatching(/contained \(#id\) or in the same Bundle/) });
  });
});

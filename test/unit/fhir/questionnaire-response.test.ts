import { describe, expect, it } from "vitest";
import type { QuestionnaireResponse, QuestionnaireResponseItem } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";

const LOINC = "http://loinc.org";
const ANSWERS: Record<number, [string, string]> = {
  0: ["LA6568-5", "Not at all"], 1: ["LA6569-3", "Several days"], 2: ["LA6570-1", "More than half the days"], 3: ["LA6571-9", "Nearly every day"],
};
const QUESTIONS = ["44250-9", "44255-8", "44259-0", "44254-1", "44251-7", "44258-2", "44252-5", "44253-3", "44260-8"];
const scored = (linkId: string, score: number): QuestionnaireResponseItem => ({
  linkId, answer: [{ valueCoding: { system: LOINC, code: ANSWERS[score]![0], display: ANSWERS[score]![1] } }],
});

/** After the R4 specification's PHQ-9 response (written anew): LOINC-coded answers and the total in item 44261-6. */
const phq9: QuestionnaireResponse = {
  resourceType: "QuestionnaireResponse",
  id: "phq9-2025-11",
  questionnaire: "http://loinc.org/q/44249-1",
  status: "completed",
  subject: { reference: "Patient/p1" },
  authored: "2025-11-02T19:45:00-05:00",
  source: { reference: "Patient/p1" },
  language: "en-US",
  item: [{
    linkId: "phq9-items",
    item: [...[1, 1, 2, 0, 1, 0, 1, 0, 0].map((s, i) => scored(`/${QUESTIONS[i]}`, s)), { linkId: "/44261-6", answer: [{ valueInteger: 6 }] }],
  }],
};

/** A clinic's own check-in form: custom, question texts, answers of several kinds. */
const checkIn: QuestionnaireResponse = {
  resourceType: "QuestionnaireResponse",
  id: "ci-3",
  questionnaire: "https://clinic.example.org/Questionnaire/weekly-check-in|2",
  status: "completed",
  authored: "2025-11-03T09:00:00Z",
  author: { reference: "Practitioner/n-4", display: "Nurse Adeyemi" },
  source: { reference: "Patient/p1" },
  item: [
    { linkId: "sleep", text: "Hours slept last night", answer: [{ valueDecimal: 6.5 }] },
    { linkId: "fever", text: "Any fever this week?", answer: [{ valueBoolean: false }] },
    { linkId: "notes", text: "Anything else?" },
  ],
};

describe("QuestionnaireResponse", () => {
  it("makes a PHQ-9 a validated instrument with scored items and the total it carries, kept by the questionnaires module", () => {
    const [log, ...rest] = derived(phq9);
    expect(rest).toEqual([]);
    expect(log).toMatchObject({
      log_type: "questionnaire_response",
      timestamp: "2025-11-02T19:45:00-05:00",
      payload: {
        instrument: { instrument_id: "PHQ-9", instrument_type: "validated" },
        administration: { administration_mode: "patient_self_report", language: "en-US", items_completed: 9, items_skipped: 0 },
        scores: { total_score: 6, total_score_max: 27 },
      },
    });
    const items = log!.payload.item_responses as Record<string, unknown>[];
    expect(items).toHaveLength(9);
    expect(items[2]).toEqual({ item_number: 3, response_value: 2, response_label: "More than half the days" });
    const instrument = folded("questionnaires", [log!]).instruments[0]!;
    expect(instrument).toMatchObject({ instrument_id: "PHQ-9", administrations: 1, latest: { total_score: 6, total_score_max: 27, timestamp: "2025-11-03T00:45:00.000Z" } });
    expect(instrument.latest_item_responses).toHaveLength(9);
  });

  it("reads a total score sent in an extension when no item carries one", () => {
    const noTotal = { ...phq9, item: [{ ...phq9.item![0]!, item: phq9.item![0]!.item!.slice(0, 9) }] };
    const withExtension = { ...noTotal, extension: [{ url: "https://app.example.org/fhir/StructureDefinition/totalScore", valueInteger: 6 }] };
    expect(derived(withExtension)[0]!.payload.scores).toEqual({ total_score: 6, total_score_max: 27 });
    expect(derived(noTotal)[0]!.payload.scores).toEqual({});
  });

  it("makes a clinic's own form a custom instrument administered by the clinician who authored it", () => {
    const [log] = derived(checkIn);
    expect(log!.payload).toMatchObject({
      instrument: { instrument_id: "weekly-check-in", instrument_type: "custom", instrument_version: "2" },
      administration: { administration_mode: "clinician_administered", administered_by: { name: "Nurse Adeyemi", role: "clinician" }, items_completed: 2, items_skipped: 1 },
      item_responses: [
        { item_number: 1, item_text: "Hours slept last night", response_value: 6.5 },
        { item_number: 2, item_text: "Any fever this week?", response_value: false },
      ],
      scores: {},
    });
    expect(folded("questionnaires", [log!]).instruments[0]).toMatchObject({ instrument_id: "weekly-check-in", instrument_type: "custom", instrument_version: "2" });
  });

  it("refuses a custom item without its question text, at the item", () => {
    const out = refused({ ...checkIn, item: [{ linkId: "sleep", answer: [{ valueDecimal: 6.5 }] }] });
    expect(out.issues[0]).toMatchObject({ path: ["item", 0, "text"], message: expect.stringMatching(/question text/) });
  });

  it("refuses a total over an answer that is not numeric, at that answer", () => {
    const items = phq9.item![0]!.item!;
    const free = { linkId: "/44250-9", answer: [{ valueString: "sometimes" }] };
    const out = refused({ ...phq9, item: [{ ...phq9.item![0]!, item: [free, ...items.slice(1)] }] });
    expect(out.issues[0]).toMatchObject({ path: ["item", 0, "item", 0, "answer"], message: expect.stringMatching(/not numeric/) });
  });

  it("refuses a response still in progress, and one administered by a caregiver who is not named", () => {
    expect(refused({ ...phq9, status: "in-progress" }).issues[0]!.path).toEqual(["status"]);
    expect(refused({ ...phq9, source: { reference: "RelatedPerson/r1" } }).issues[0]).toMatchObject({ path: ["source", "display"] });
  });
});

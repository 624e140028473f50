import { describe, expect, it } from "vitest";
import { validatePayload, type LogType } from "../../catalog/index.js";
import { DATE_OR_DATETIME_PATTERN, DATE_PATTERN, DATETIME_PATTERN } from "../../catalog/schemas/common.js";
import { validateEnvelope } from "../../src/logs/envelope.js";
import { isCalendarDay } from "../../catalog/calendar.js";

const at = ["body", "logs", 0];
const envelope = (log_type: LogType, payload: Record<string, unknown>) =>
  validateEnvelope({ log_type, patient_id: "pat_1", timestamp: "2026-03-01T10:00:00Z", payload }, at);

const note = { note_type: "other", source: "ehr", sections: [{ section_label: "A", content: "B" }] };
const vitals = { measurements: { heart_rate_bpm: 70 }, context: {}, source: "device" };

/** Each payload date field the catalog checks, with a day that does not exist. */
const IMPOSSIBLE_DAYS: [LogType, Record<string, unknown>, (string | number)[], string][] = [
  ["lab_results", { results: [{ test_name: "Hb", unit: "g/dL" }], collection_datetime: "2026-02-30T08:00:00Z" }, ["collection_datetime"], "2026-02-30"],
  ["vitals_measurement", { ...vitals, collection_datetime: "2026-02-30T08:00:00Z" }, ["collection_datetime"], "2026-02-30"],
  ["clinical_note", { ...note, authored_date: "2026-02-30" }, ["authored_date"], "2026-02-30"],
  ["imaging_result", { findings: [{ modality: "CT" }], study_date: "2026-02-31" }, ["study_date"], "2026-02-31"],
  ["activity_data", { steps: 10, local_date: "2026-02-30" }, ["local_date"], "2026-02-30"],
  ["cgm_reading", { glucose_mg_dl: 100, sensor_timestamp: "2026-02-30T10:00:00Z" }, ["sensor_timestamp"], "2026-02-30"],
  ["demographics", { dob: "1950-02-30" }, ["dob"], "1950-02-30"],
  ["treatment_phase", { new_phase: "surveillance", effective_date: "2026-02-31", changed_by: "clinician" }, ["effective_date"], "2026-02-31"],
  [
    "medication_adherence",
    { medication_adherence: [{ status: "taken", rxnorm_cui: "197361", scheduled_time: "2026-02-30T15:00:00Z" }] },
    ["medication_adherence", 0, "scheduled_time"],
    "2026-02-30",
  ],
  ["sleep_data", { period: { start_datetime: "2026-04-31T22:00:00+02:00" } }, ["period", "start_datetime"], "2026-04-31"],
];

const pad = (n: number, width: number) => String(n).padStart(width, "0");

describe("payload dates", () => {
  it.each(IMPOSSIBLE_DAYS)("refuses a %s whose date names a day that does not exist, located like the envelope's", (type, payload, path, day) => {
    const value = path.reduce<any>((v, k) => v[k], payload);
    const r = envelope(type, payload);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.details).toEqual([
      {
        type: "value_error",
        message: `must be a real calendar date: ${day} does not exist`,
        field: ["logs", 0, "payload", ...path].join("."),
        location: [...at, "payload", ...path],
        input_value: value,
      },
    ]);
  });

  it("matches the calendar exactly: days past a month's end and 29 February outside leap years are refused", () => {
    const years = [0, 4, 100, 400, 1600, 1700, 1800, 1900, 2000, 2100, 2400, 9996, 9999];
    for (let y = 1896; y <= 2104; y++) years.push(y);
    const date = new RegExp(DATE_PATTERN);
    const datetime = new RegExp(DATETIME_PATTERN);
    const either = new RegExp(DATE_OR_DATETIME_PATTERN);
    const wrong: string[] = [];
    for (const y of years) {
      for (let m = 1; m <= 12; m++) {
        for (let d = 1; d <= 31; d++) {
          const ymd = `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`;
          const real = isCalendarDay(y, m, d);
          const accepted = [date.test(ymd), datetime.test(`${ymd}T08:00:00Z`), either.test(ymd), either.test(`${ymd}T08:00-05:00`)];
          if (accepted.some((a) => a !== real)) wrong.push(ymd);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("accepts 29 February in leap years, and still names a malformed date by its form", () => {
    expect(validatePayload("demographics", { dob: "2000-02-29" })).toEqual([]);
    expect(validatePayload("cgm_reading", { glucose_mg_dl: 90, sensor_timestamp: "2024-02-29T23:59:59.5+14:00" })).toEqual([]);
    expect(validatePayload("demographics", { dob: "1900-02-29" })[0]!.message).toBe("must be a real calendar date: 1900-02-29 does not exist");
    expect(validatePayload("demographics", { dob: "1950-13-01" })[0]!.message).toBe("must be an ISO 8601 date (YYYY-MM-DD)");
    expect(validatePayload("demographics", { dob: "2026-02-28T10:00:00Z" })[0]!.message).toBe("must be an ISO 8601 date (YYYY-MM-DD)");
  });
});

describe("input_value of a missing field", () => {
  it("is the object that lacks the field, as sent", () => {
    const payload = { measurements: { heart_rate_bpm: 70 }, context: {}, collection_datetime: null };
    const r = envelope("vitals_measurement", payload);
    expect(!r.ok && r.details).toEqual([
      { type: "value_error", message: "is required", field: "logs.0.payload.source", location: [...at, "payload", "source"], input_value: payload },
    ]);
  });

  it("is the entry that lacks the field when it is missing inside a list, and for a cross-field rule too", () => {
    expect(validatePayload("lab_results", { results: [{ test_name: "Hb", unit: "g/dL" }, { test_name: "Na" }] })).toEqual([
      { path: ["results", 1, "unit"], message: "is required", value: { test_name: "Na" } },
    ]);
    expect(validatePayload("lab_results", { results: [{ unit: "g/dL", value_numeric: 5 }] })).toEqual([
      { path: ["results", 0, "test_name"], message: "is required when loinc_code is absent", value: { unit: "g/dL", value_numeric: 5 } },
    ]);
  });

  it("names a large parent by its size instead of echoing it whole", () => {
    const payload = { measurements: { heart_rate_bpm: 70 }, context: {}, collection_datetime: null, extensions: { note: "x".repeat(3000) } };
    const [found] = validatePayload("vitals_measurement", payload);
    expect(found).toMatchObject({ path: ["source"], message: "is required" });
    expect(found!.value).toBe("(an object of over 2048 bytes as JSON)");
  });

  it("leaves a present value as sent, bounding only a long one", () => {
    expect(validatePayload("cgm_reading", { glucose_mg_dl: -1, sensor_timestamp: "2026-03-01T10:00:00Z" })[0]!.value).toBe(-1);
    const long = "y".repeat(5000);
    expect(validatePayload("demographics", { dob: long })[0]!.value).toBe(`${"y".repeat(200)}… (5000 characters)`);
  });
});

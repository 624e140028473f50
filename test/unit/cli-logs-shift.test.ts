import { describe, expect, it } from "vitest";
import { shiftError } from "../../cli/commands/logs.js";

describe("pss logs send --batch-size: errors placed in the whole file", () => {
  it("moves index, message, details' location and field together", () => {
    const e = {
      index: 0,
      code: "validation_error",
      message: "logs.0.payload.symptoms.0.score must be <= 10",
      details: [{ type: "value_error", message: "must be <= 10", field: "logs.0.payload.symptoms.0.score", location: ["body", "logs", 0, "payload", "symptoms", 0, "score"], input_value: 42 }],
    };
    expect(shiftError(e, 10)).toEqual({
      index: 10,
      code: "validation_error",
      message: "logs.10.payload.symptoms.0.score must be <= 10",
      details: [{ type: "value_error", message: "must be <= 10", field: "logs.10.payload.symptoms.0.score", location: ["body", "logs", 10, "payload", "symptoms", 0, "score"], input_value: 42 }],
    });
  });

  it("leaves messages that name no position, and other logs' numbers, alone", () => {
    const e = { index: 1, code: "patient_not_found", message: "patient pat_x not found", details: [{ type: "patient_not_found", message: "patient pat_x not found", field: "logs.1.patient_id", location: ["body", "logs", 1, "patient_id"] }] };
    expect(shiftError(e, 5)).toMatchObject({ index: 6, message: "patient pat_x not found", details: [{ field: "logs.6.patient_id", location: ["body", "logs", 6, "patient_id"] }] });
    expect(shiftError({ ...e, index: 1, message: "logs.12.x is bad" }, 5).message).toBe("logs.12.x is bad");
  });
});

import { describe, expect, it } from "vitest";
import { columnsOf, emptyForm, queryBody, toCsv } from "../../console/src/lib/log-query.js";

/** The console's log query form: the body it sends (and shows), and the CSV of an answer. */
describe("the console's log query body", () => {
  it("is the empty query's limit alone when nothing is filled in", () => {
    expect(queryBody(emptyForm())).toEqual({ limit: 100 });
  });

  it("types each condition's value as its operator takes it", () => {
    const body = queryBody({
      ...emptyForm(),
      logType: " symptom_report ",
      patientIds: "pat_a, pat_b,",
      since: "2026-01-01T00:00:00Z",
      conditions: [
        { field: "payload.symptoms.0.score", op: "gte", value: "5" },
        { field: "payload.instrument", op: "in", value: "esas_r, 12" },
        { field: "trace", op: "is", value: "null" },
        { field: "payload.note", op: "exists", value: "false" },
        { field: "payload.flag", op: "eq", value: "true" },
        { field: "", op: "eq", value: "ignored: no field" },
      ],
    });
    expect(body).toEqual({
      patient_ids: ["pat_a", "pat_b"],
      filter: [
        { field: "type", op: "eq", value: "symptom_report" },
        { field: "timestamp", op: "gte", value: "2026-01-01T00:00:00Z" },
        { field: "payload.symptoms.0.score", op: "gte", value: 5 },
        { field: "payload.instrument", op: "in", value: ["esas_r", 12] },
        { field: "trace", op: "is", value: null },
        { field: "payload.note", op: "exists", value: false },
        { field: "payload.flag", op: "eq", value: true },
      ],
      limit: 100,
    });
  });

  it("groups with the aggregations that have an alias, a field only where one is given", () => {
    const body = queryBody({ ...emptyForm(), groupBy: "type, payload.instrument", limit: "", aggregations: [{ op: "count", field: "", alias: "n" }, { op: "avg", field: "payload.score", alias: "mean" }, { op: "max", field: "x", alias: " " }] });
    expect(body).toEqual({ group_by: ["type", "payload.instrument"], aggregations: [{ op: "count", alias: "n" }, { op: "avg", field: "payload.score", alias: "mean" }] });
  });
});

describe("the console's CSV of a query answer", () => {
  it("has every row's keys as columns, quotes what needs it and writes objects as JSON", () => {
    const rows = [{ type: "note", payload: { text: 'say "hi", then\nleave' } }, { type: "condition", n: 2 }];
    const columns = columnsOf(rows);
    expect(columns).toEqual(["type", "payload", "n"]);
    expect(toCsv(columns, rows)).toBe('type,payload,n\r\nnote,"{""text"":""say \\""hi\\"", then\\nleave""}",\r\ncondition,,2\r\n');
  });

  it("makes a text cell a spreadsheet would run as a formula inert, and leaves negative numbers alone", () => {
    const rows = [{ a: "=HYPERLINK(\"x\")", b: -3, c: "@SUM(A1)", d: "-1" }];
    expect(toCsv(["a", "b", "c", "d"], rows)).toBe(`"'=HYPERLINK(""x"")",-3,'@SUM(A1),'-1\r\n`.replace(/^/, "a,b,c,d\r\n"));
  });
});

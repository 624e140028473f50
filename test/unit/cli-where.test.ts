import { describe, expect, it } from "vitest";
import { parseWhere, queryBody } from "../../cli/commands/query.js";

describe("pss query --where", () => {
  it("reads each operator, with or without spaces, and == as =", () => {
    expect(parseWhere("payload.score>3")).toEqual({ field: "payload.score", op: "gt", value: 3 });
    expect(parseWhere("payload.score == 5")).toEqual({ field: "payload.score", op: "eq", value: 5 });
    expect(parseWhere("payload.score=5")).toEqual({ field: "payload.score", op: "eq", value: 5 });
    expect(parseWhere("payload.score <= 5")).toEqual({ field: "payload.score", op: "lte", value: 5 });
    expect(parseWhere("type != symptom_report")).toEqual({ field: "type", op: "neq", value: "symptom_report" });
    expect(parseWhere("trace~visit-%")).toEqual({ field: "trace", op: "ilike", value: "visit-%" });
    expect(parseWhere("trace == null")).toEqual({ field: "trace", op: "is", value: null });
    expect(parseWhere("type in a,b")).toEqual({ field: "type", op: "in", value: ["a", "b"] });
  });

  it("refuses an operator it does not know rather than comparing with the rest as text", () => {
    for (const expr of ["payload.score => 5", "payload.score =< 5", "payload.score === 5", "payload.score <> 5"]) {
      expect(() => parseWhere(expr), expr).toThrow(/no operator .*use one of = != > >= < <= ~ in nin contains/);
    }
    // A value that starts with such a character is sent as a JSON string.
    expect(parseWhere('payload.note = "=x"')).toEqual({ field: "payload.note", op: "eq", value: "=x" });
  });
});

describe("pss query --order", () => {
  it("takes FIELD, -FIELD, FIELD:asc and FIELD:desc, and refuses another direction by name", async () => {
    expect((await queryBody({ order: "timestamp:desc,-type,payload.score:asc,trace" })).order).toEqual([
      { field: "timestamp", desc: true }, { field: "type", desc: true }, { field: "payload.score" }, { field: "trace" },
    ]);
    await expect(queryBody({ order: "timestamp:sideways" })).rejects.toThrow('the direction is asc or desc, not "sideways"');
  });
});

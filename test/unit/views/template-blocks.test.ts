import { describe, expect, it } from "vitest";
import { emptyPatientState } from "../../../readmodels/patient-state.js";
import { renderView, VIEW_TYPES } from "../../../readmodels/views/index.js";
import { blockListing, TEMPLATE_BLOCKS, viewBlock } from "../../../readmodels/views/template-blocks.js";
import { at, given, log } from "../readmodels/given.js";
import * as fixtures from "./fixtures.js";

/** Every fixture state of the view tests: between them they give every block something to say. */
const states = [
  given(fixtures.allLogs()),
  ...[fixtures.symptomLogs, fixtures.medicationLogs, fixtures.labLogs, fixtures.vitalLogs, fixtures.profileLogs, fixtures.engagementLogs, fixtures.questionnaireLogs, fixtures.deviceLogs].map((f) => given(f().logs)),
  // The one block the view fixtures leave empty.
  given([log("emergency_contact", at(1), { name: "Luis Ruiz", relationship: "son", phone: "+15550000" })]),
];

describe("template blocks", () => {
  it("name every block the templates render, with its name and segment, in the order views list them", () => {
    const seen = new Set<string>();
    for (const t of VIEW_TYPES) {
      const ids = TEMPLATE_BLOCKS[t].map((x) => x.id);
      expect(new Set(ids).size, t).toBe(ids.length);
      // Week and long-term blocks first, temp blocks last: the order of [...blocks, ...temp].
      const segments = TEMPLATE_BLOCKS[t].map((x) => x.segment === "temp");
      expect(segments, t).toEqual([...segments].sort((a, b) => Number(a) - Number(b)));
      for (const s of states) {
        const v = renderView(t, s);
        const rendered = [...v.blocks, ...v.temp];
        for (const r of rendered) {
          expect(TEMPLATE_BLOCKS[t].find((x) => x.id === r.id), `${t}.${r.id}`).toEqual({ id: r.id, name: r.name, segment: r.segment });
          seen.add(`${t}.${r.id}`);
        }
        const order = rendered.map((r) => ids.indexOf(r.id));
        expect(order, t).toEqual([...order].sort((a, b) => a - b));
      }
    }
    // And the fixtures reach every block the list names, so none is made up.
    const listed = VIEW_TYPES.flatMap((t) => TEMPLATE_BLOCKS[t].map((x) => `${t}.${x.id}`));
    expect(listed.filter((k) => !seen.has(k))).toEqual([]);
  });

  it("list every block of a view with has_result, and answer a known block with nothing to say as an empty one", () => {
    const empty = renderView("symptom_snapshot", emptyPatientState("pat_1"));
    expect(blockListing(empty).map((x) => x.has_result)).toEqual(TEMPLATE_BLOCKS.symptom_snapshot.map(() => false));
    expect(viewBlock(empty, "active_symptoms")).toEqual({ id: "active_symptoms", name: "Active symptoms", segment: "long_term", text: "", refs: [], data: null });
    expect(viewBlock(empty, "no_such_block")).toBeUndefined();
    const full = renderView("symptom_snapshot", given(fixtures.symptomLogs().logs));
    const listing = blockListing(full);
    expect(listing.find((x) => x.block_id === "active_symptoms")?.has_result).toBe(true);
    expect(viewBlock(full, "active_symptoms")?.text).not.toBe("");
  });
});

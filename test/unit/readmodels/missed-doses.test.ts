import { describe, expect, it } from "vitest";
import { missedDoses as alertMissed } from "../../../app/mcp/prompts/alert-findings.js";
import { medicationChanges } from "../../../readmodels/changes/medications.js";
import { inWindow } from "../../../readmodels/changes/types.js";
import { findMissedDoses } from "../../../readmodels/findings.js";
import { at, given, log } from "./given.js";

/**
 * The missed doses the provider alert and the changes read both say, found once
 * (findMissedDoses): each says them in its own words and cites the listing its own way.
 */
const listed = log("medication_list_update", at(1, 7), { medications: [{ action: "add", medication_name: "Metformin", rxnorm_cui: "860975", schedule_times: ["08:00"] }] });
const updated = log("medication_list_update", at(2, 7), { medications: [{ action: "update", rxnorm_cui: "860975", dose: "500 mg" }] });
const taken = log("medication_adherence", at(3, 8, 5), { medication_adherence: [{ status: "taken", rxnorm_cui: "860975", scheduled_time: at(3, 8) }] });
const skipped = log("medication_adherence", at(4, 8, 10), { medication_adherence: [{ status: "skipped", rxnorm_cui: "860975", scheduled_time: at(4, 8) }] });
const state = given([listed, updated, taken, skipped]);
const since = at(3, 0);
const now = at(6, 13);

describe("missed doses", () => {
  it("finds the skipped doses and, per schedule as of the read, the doses never reported, with the listing", () => {
    const found = findMissedDoses(state, now, (t) => t >= since);
    expect(found.skipped.map((d) => d.log_id)).toEqual([skipped.id]);
    expect(found.unreported).toHaveLength(1);
    const [u] = found.unreported;
    expect(u!.doses.map((d) => d.scheduled_time)).toEqual([at(5, 8), at(6, 8)]);
    expect(u!.listing?.sources.map((s) => s.log_id)).toEqual([listed.id, updated.id]);
  });

  it("leaves out a skip that a later report of the same dose superseded", () => {
    const tookAfterAll = log("medication_adherence", at(4, 9), { medication_adherence: [{ status: "taken", rxnorm_cui: "860975", scheduled_time: at(4, 8) }] });
    const s = given([listed, updated, taken, skipped, tookAfterAll]);
    expect(findMissedDoses(s, now, (t) => t >= since).skipped).toEqual([]);
    expect(alertMissed(s, since, now).map((f) => f.line)).toEqual(["Metformin: not reported (2 scheduled doses, 2025-03-05 08:00 to 2025-03-06 08:00)"]);
  });

  it("the provider alert cites every log of the listing; the changes read its latest", () => {
    expect(alertMissed(state, since, now)).toEqual([
      { timestamp: skipped.timestamp, line: "Metformin: dose skipped (scheduled 2025-03-04 08:00)", log_ids: [skipped.id] },
      { timestamp: at(6, 8), line: "Metformin: not reported (2 scheduled doses, 2025-03-05 08:00 to 2025-03-06 08:00)", log_ids: [listed.id, updated.id] },
    ]);
    const w = { since, until: now };
    const logs = [listed, updated, taken, skipped].filter((l) => inWindow(l.timestamp, w));
    const missed = medicationChanges(state, state, w, logs).filter((c) => c.kind === "skipped_dose" || c.kind === "doses_not_reported");
    expect(missed).toEqual([
      { kind: "skipped_dose", what: "Metformin: dose skipped, scheduled 2025-03-04 08:00", at: skipped.timestamp, log_ids: [skipped.id] },
      {
        kind: "doses_not_reported", what: "Metformin: 2 scheduled doses not reported (2025-03-05 08:00 to 2025-03-06 08:00)", at: at(6, 8),
        log_ids: [updated.id], after: { scheduled_times: [at(5, 8), at(6, 8)] },
      },
    ]);
  });
});

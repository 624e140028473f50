import { describe, expect, it } from "vitest";
import { applyLedger, decodeLedger, type Claim } from "../../src/logs/ledger-codec.js";

const claim = (log_id: string, claimed_at = 1_700_000_000_000): Claim => ({ log_id, patient_id: "pat_1", claimed_at });

describe("ledger messages", () => {
  it("decode the text format step by step, in order", () => {
    const text = ["c k1 log_a pat_1 1700000000000", "r k1 log_a", "c k1 log_b pat_1 1700000000001", "c k2 log_c pat_1 1700000000000"].join("\n");
    expect(decodeLedger(new TextEncoder().encode(text))).toEqual([
      { op: "c", key: "k1", claim: claim("log_a") },
      { op: "r", key: "k1", logId: "log_a" },
      { op: "c", key: "k1", claim: claim("log_b", 1_700_000_000_001) },
      { op: "c", key: "k2", claim: claim("log_c") },
    ]);
    const state = new Map<string, Claim>();
    applyLedger(state, decodeLedger(text));
    expect(state).toEqual(new Map([["k1", claim("log_b", 1_700_000_000_001)], ["k2", claim("log_c")]]));
  });

  it("decode the first format (JSON: claims, then releases) to the same state the writer meant", () => {
    const json = JSON.stringify({ c: [{ k: "k1", l: "log_a", p: "pat_1", t: 1_700_000_000_000 }, { k: "k2", l: "log_c", p: "pat_1", t: 1_700_000_000_000 }], r: [{ k: "k2", l: "log_c" }, { k: "k3", l: "log_x" }] });
    const state = new Map<string, Claim>([["k3", claim("log_y")]]);
    applyLedger(state, decodeLedger(json));
    // A release only frees a key its log still holds.
    expect(state).toEqual(new Map([["k3", claim("log_y")], ["k1", claim("log_a")]]));
  });

  it("leave out what the writer could not have written, so a message another client published never stops a shard", () => {
    for (const forged of ["{not json", "{}", '{"c":"x","r":[null,1]}', '{"c":[{"k":"k9","l":"log_z"}],"r":[{"k":1}]}', "\u0000\u0001", "c", "c k1", "c k1 log_a", "c  log_a pat_1 1", "r k1", "r k1 log_a extra"]) {
      expect(decodeLedger(new TextEncoder().encode(forged))).toEqual([]);
    }
    const mixed = ["c k1 log_a pat_1 1700000000000", "c k2 log_b pat_1 soon", "r k9"].join("\n");
    expect(decodeLedger(mixed)).toEqual([{ op: "c", key: "k1", claim: claim("log_a") }]);
  });
});

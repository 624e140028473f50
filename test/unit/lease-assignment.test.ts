import { describe, expect, it } from "vitest";
import { assignResources } from "../../infra/nats/lease-assignment.js";

const partitions = (n: number) => Array.from({ length: n }, (_, i) => `p.${i}`);
/** Ids shaped like real ones (`host-pid-random`), the same on every run. */
const membersOf = (n: number, trial = 0) => Array.from({ length: n }, (_, i) => ({ id: `host${trial}-${1000 + i}-${(trial * 7919 + i * 104729).toString(36)}` }));

function loads(owners: Map<string, string | null>): Map<string | null, number> {
  const out = new Map<string | null, number>();
  for (const m of owners.values()) out.set(m, (out.get(m) ?? 0) + 1);
  return out;
}

const moved = (a: Map<string, string | null>, b: Map<string, string | null>) => [...a].filter(([r, m]) => b.get(r) !== m).map(([r]) => r);

describe("assignResources", () => {
  it("gives every member ⌊R/N⌋ or ⌈R/N⌉ resources when weights are equal", () => {
    for (const r of [1, 7, 16, 64, 256]) {
      for (let n = 1; n <= 9; n++) {
        for (let trial = 0; trial < 3; trial++) {
          const owners = assignResources(partitions(r), membersOf(n, trial));
          expect(owners.size).toBe(r);
          const counts = membersOf(n, trial).map((m) => loads(owners).get(m.id) ?? 0);
          expect(counts.reduce((s, c) => s + c, 0)).toBe(r);
          expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
        }
      }
    }
  });

  it("answers the same whatever the order of members and resources", () => {
    const ms = membersOf(5);
    const a = assignResources(partitions(64), ms);
    const b = assignResources(partitions(64).reverse(), [...ms].reverse());
    expect(new Map([...b].sort())).toEqual(new Map([...a].sort()));
  });

  it("moves little more than the joiner's share when a member joins, and than the leaver's when one leaves", () => {
    // Exact balance costs some movement beyond the minimum (a pure function cannot have
    // both for every member set); these bounds hold the greedy to what it measures.
    for (const [r, n, bound] of [[16, 3, 1.35], [16, 5, 1.55], [64, 3, 1.2], [64, 8, 1.6], [128, 5, 1.25]] as const) {
      let moves = 0;
      let minimum = 0;
      let leaveMoves = 0;
      let leaveMinimum = 0;
      for (let trial = 0; trial < 25; trial++) {
        const ms = membersOf(n, trial);
        const before = assignResources(partitions(r), ms);
        const joined = assignResources(partitions(r), [...ms, { id: `joiner-${trial}` }]);
        moves += moved(before, joined).length;
        minimum += loads(joined).get(`joiner-${trial}`) ?? 0;
        const left = assignResources(partitions(r), ms.slice(1));
        leaveMoves += moved(before, left).length;
        leaveMinimum += loads(before).get(ms[0]!.id) ?? 0;
      }
      expect(moves / minimum, `join, ${r} resources over ${n} members`).toBeLessThan(bound);
      expect(leaveMoves / leaveMinimum, `leave, ${r} resources over ${n} members`).toBeLessThan(bound);
    }
  });

  it("moves only the leaver's resources when one of two members leaves", () => {
    const [a, b] = membersOf(2);
    const before = assignResources(partitions(16), [a!, b!]);
    const after = assignResources(partitions(16), [a!]);
    expect(moved(before, after).sort()).toEqual([...before].filter(([, m]) => m === b!.id).map(([r]) => r).sort());
  });

  it("assigns a resource only to members whose role can work it, and to nobody when none can", () => {
    const ms = [
      { id: "api-1", role: "api" },
      { id: "engine-1", role: "engine" },
      { id: "engine-2", role: "engine" },
      { id: "all-1", role: "all" },
    ];
    const canWork = (resource: string, m: { role: string }) => m.role === "all" || (m.role === "engine" && resource.startsWith("p.")) || (m.role === "engine" && resource === "jobs");
    const owners = assignResources([...partitions(12), "jobs", "projector", "nobody"], ms, { canWork: (r, m) => r !== "nobody" && canWork(r, m) });
    expect(owners.get("projector")).toBe("all-1");
    expect(owners.get("nobody")).toBeNull();
    expect(["engine-1", "engine-2", "all-1"]).toContain(owners.get("jobs"));
    const counts = loads(new Map(partitions(12).map((p) => [p, owners.get(p) ?? null])));
    expect(counts.get("api-1")).toBeUndefined();
    expect([counts.get("engine-1"), counts.get("engine-2"), counts.get("all-1")]).toEqual([4, 4, 4]);
  });

  it("spreads singletons that have the same candidates over different members", () => {
    const owners = assignResources(["projector", "jobs", "backfill"], membersOf(3));
    expect(new Set(owners.values()).size).toBe(3);
  });

  it("shares resources in proportion to weights, and gives a member of weight 0 nothing", () => {
    const ms = [
      { id: "small", w: 1 },
      { id: "big", w: 2 },
      { id: "off", w: 0 },
    ];
    const owners = assignResources(partitions(30), ms, { weight: (m) => m.w });
    const counts = loads(owners);
    expect(counts.get("small")).toBe(10);
    expect(counts.get("big")).toBe(20);
    expect(counts.get("off")).toBeUndefined();
  });

  it("assigns nothing when there are no members", () => {
    expect([...assignResources(partitions(3), []).values()]).toEqual([null, null, null]);
  });
});

import { createHash } from "node:crypto";

/** A member as the assignment sees it: an id, and whatever the predicate and weight read. */
export interface AssignableMember {
  id: string;
}

export interface AssignmentOptions<M extends AssignableMember> {
  /** Whether `member` may work `resource` (its role can). @default every member can work every resource */
  canWork?: (resource: string, member: M) => boolean;
  /** A member's share relative to the others; 0 makes it no candidate. @default 1 */
  weight?: (member: M) => number;
}

/**
 * Which member should own each resource: the member id, or null when no member can work it.
 * Pure: every member computes the same answer from the same set of live members.
 *
 * Rendezvous (highest-random-weight) hashing gives each (resource, member) pair a score
 * that depends on nothing else, so a member joining or leaving changes only the pairs it
 * is part of. Plain rendezvous hashing is balanced only on average (16 partitions over 3
 * members can come out 8/4/4), so each member also gets a quota, its weighted share of the
 * resources it can work, and the pairs are taken greedily, best score first, while the
 * member is under its quota. Equal weights give every member ⌊R/N⌋ or ⌈R/N⌉ resources.
 *
 * Resources are balanced within groups: the same family (the name up to its last dot:
 * `p.0` … `p.15` are family `p`; names without a dot, the singletons, are one family) and
 * the same candidates. So partitions are balanced among themselves, and singletons with
 * the same candidates land on different members when they can. Groups are balanced each
 * on its own: a member may get a singleton on top of its share of partitions.
 */
export function assignResources<M extends AssignableMember>(resources: readonly string[], members: readonly M[], options: AssignmentOptions<M> = {}): Map<string, string | null> {
  const canWork = options.canWork ?? (() => true);
  const weightOf = (m: M) => {
    const w = options.weight ? options.weight(m) : 1;
    return Number.isFinite(w) && w > 0 ? w : 0;
  };
  const sorted = [...members].filter((m) => weightOf(m) > 0).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const groups = new Map<string, { resources: string[]; candidates: M[] }>();
  const out = new Map<string, string | null>();
  for (const r of new Set(resources)) {
    const candidates = sorted.filter((m) => canWork(r, m));
    if (candidates.length === 0) {
      out.set(r, null);
      continue;
    }
    const dot = r.lastIndexOf(".");
    const key = `${dot < 0 ? "" : r.slice(0, dot)}\u0001${candidates.map((m) => m.id).join("\u0000")}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { resources: [], candidates }));
    group.resources.push(r);
  }
  for (const { resources: rs, candidates } of groups.values()) {
    for (const [r, id] of assignGroup(rs, candidates, weightOf)) out.set(r, id);
  }
  return out;
}

function assignGroup<M extends AssignableMember>(resources: string[], members: M[], weightOf: (m: M) => number): Map<string, string> {
  const total = members.reduce((s, m) => s + weightOf(m), 0);
  const quota = members.map((m) => (resources.length * weightOf(m)) / total);
  const floor = quota.map((q) => Math.floor(q + 1e-9));
  // The resources left after every member took its whole part go one each to members with
  // a fractional part, first come first served in score order.
  let extras = resources.length - floor.reduce((s, f) => s + f, 0);
  const mayTakeExtra = quota.map((q, i) => q - floor[i]! > 1e-9);
  const pairs: { score: number; r: string; m: number }[] = [];
  for (const r of resources) {
    members.forEach((member, m) => pairs.push({ score: rendezvousScore(r, member.id, weightOf(member)), r, m }));
  }
  pairs.sort((a, b) => b.score - a.score || (a.r < b.r ? -1 : a.r > b.r ? 1 : a.m - b.m));
  const count = members.map(() => 0);
  const out = new Map<string, string>();
  for (const { r, m } of pairs) {
    if (out.has(r)) continue;
    if (count[m]! < floor[m]!) {
      count[m]!++;
    } else if (count[m] === floor[m] && mayTakeExtra[m] && extras > 0) {
      count[m]!++;
      extras--;
    } else {
      continue;
    }
    out.set(r, members[m]!.id);
    if (out.size === resources.length) break;
  }
  return out;
}

/**
 * Weighted rendezvous score of a (resource, member) pair: −w / ln(u), with u uniform in
 * (0, 1) from a hash of the pair. With equal weights the order is that of u.
 */
export function rendezvousScore(resource: string, memberId: string, weight = 1): number {
  const h = createHash("sha256").update(resource).update("\u0000").update(memberId).digest();
  const u = (h.readUIntBE(0, 6) + 0.5) / 2 ** 48;
  return -weight / Math.log(u);
}

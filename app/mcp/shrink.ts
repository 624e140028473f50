/**
 * Cutting a JSON answer to a size budget without losing a clinical entity silently.
 *
 * A document holds two kinds of lists. Histories (items stamped with a `timestamp`, or
 * plain values such as log ids) can lose their oldest entries and still say what is true
 * now. Entity lists (symptoms, lab tests, medications, a view's blocks) cannot: a symptom
 * left out reads as a symptom the patient does not have. So every history is shortened to
 * the same newest N entries first, N as large as fits; only when each history is down to
 * one entry are entities left out, by name, and the answer lists them.
 */
import { isObj } from "../../readmodels/lib/payload.js";

const CUT_MARK = "… [truncated]";

const bytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? "null");

type Holder = Record<string, unknown> | unknown[];

interface ListSlot {
  /** `payload.symptoms[2].history`: where the list is. */
  path: string;
  /** The same with every index as `[*]`: lists of the same kind in sibling entities. */
  pattern: string;
  holder: Holder;
  key: string | number;
  list: unknown[];
}

/** Histories shortened at one path pattern: how many entries were kept of how many, over how many lists. */
export interface Cut {
  path: string;
  kept: number;
  total: number;
}

/** Entities left out of one list, named so that they can be asked for. */
export interface LeftOut {
  path: string;
  kept: number;
  total: number;
  /** Each left-out entity's name (its name, test, code or id field), or its index. */
  left_out: string[];
}

/** A history: every item a plain value (log ids), or a record stamped with a timestamp (a report, a dose, a note). */
function isHistory(list: unknown[]): boolean {
  return list.every((x) => !isObj(x) && !Array.isArray(x)) || list.every((x) => isObj(x) && typeof x.timestamp === "string");
}

/** Oldest first (time-ordered): keep the newest, i.e. the tail; otherwise the head. */
function keepsTail(list: unknown[]): boolean {
  const ts = (x: unknown) => (isObj(x) ? x.timestamp : undefined);
  const a = ts(list[0]);
  const b = ts(list[list.length - 1]);
  return typeof a === "string" && typeof b === "string" && a < b;
}

function lists(root: unknown): ListSlot[] {
  const out: ListSlot[] = [];
  const walk = (v: unknown, path: string, pattern: string, holder: Holder | null, key: string | number) => {
    if (Array.isArray(v)) {
      if (holder) out.push({ path, pattern, holder, key, list: v });
      v.forEach((x, i) => walk(x, `${path}[${i}]`, `${pattern}[*]`, v, i));
    } else if (isObj(v)) {
      for (const [k, x] of Object.entries(v)) walk(x, path === "" ? k : `${path}.${k}`, pattern === "" ? k : `${pattern}.${k}`, v, k);
    }
  };
  walk(root, "", "", null, "");
  return out;
}

const ENTITY_NAME_FIELDS = ["name", "test_name", "medication_name", "measurement_type", "symptom_type", "questionnaire_type", "loinc_code", "rxnorm_cui", "code", "id", "type"];

function entityName(item: unknown, index: number): string {
  if (isObj(item)) {
    for (const f of ENTITY_NAME_FIELDS) if (typeof item[f] === "string" && item[f] !== "") return item[f];
  }
  return `[${index}]`;
}

function set(slot: { holder: Holder; key: string | number }, value: unknown): void {
  (slot.holder as Record<string | number, unknown>)[slot.key] = value;
}

/** Cuts every text longer than `longest` characters, longest first, while the document is over budget. */
function cutTexts(doc: unknown, longest: number, budget: number): void {
  const texts: { holder: Holder; key: string | number; text: string }[] = [];
  const visit = (holder: Holder, key: string | number, x: unknown) => {
    if (typeof x === "string") texts.push({ holder, key, text: x });
    else walk(x);
  };
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach((x, i) => visit(v, i, x));
    else if (isObj(v)) for (const [k, x] of Object.entries(v)) visit(v, k, x);
  };
  walk(doc);
  texts.sort((a, b) => b.text.length - a.text.length);
  for (const t of texts) {
    if (t.text.length <= longest + CUT_MARK.length || bytes(doc) <= budget) break;
    set(t, `${t.text.slice(0, longest)}${CUT_MARK}`);
  }
}

/** Every history kept to its newest `n` entries (a copy of each list; the originals stay for the next try). */
function capHistories(histories: ListSlot[], n: number): void {
  for (const h of histories) set(h, h.list.length <= n ? h.list : keepsTail(h.list) ? h.list.slice(h.list.length - n) : h.list.slice(0, n));
}

/**
 * A copy of `value` that fits `budget`. In order, while it is over: texts longer than a
 * quarter of the budget are cut (one pasted note must not cost the rest of the answer);
 * every history keeps its newest N entries, the largest N that fits (at least 1, or none
 * for a history beside its entity's `latest`); entity
 * lists, innermost and largest first, keep their leading entities and name the others;
 * last, long texts are cut shorter and shorter. Histories and entities cut are reported.
 */
export function shrink<T>(value: T, budget: number): { value: T; cuts: Cut[]; leftOut: LeftOut[] } {
  if (bytes(value) <= budget) return { value, cuts: [], leftOut: [] };
  const copy = JSON.parse(JSON.stringify(value)) as T;
  cutTexts(copy, Math.floor(budget / 4), budget);
  const cuts = shortenHistories(copy, budget);
  const leftOut = leaveOutEntities(copy, budget);
  for (let longest = Math.floor(budget / 8); longest >= 100 && bytes(copy) > budget; longest = Math.floor(longest / 2)) {
    cutTexts(copy, longest, budget);
  }
  return { value: copy, cuts, leftOut };
}

function shortenHistories(doc: unknown, budget: number): Cut[] {
  if (bytes(doc) <= budget) return [];
  const histories = lists(doc).filter((s) => s.list.length > 1 && isHistory(s.list));
  if (histories.length === 0) return [];
  // The largest N that fits, by bisection: each try caps every history afresh.
  let lo = 1;
  let hi = Math.max(...histories.map((h) => h.list.length)) - 1;
  capHistories(histories, lo);
  if (bytes(doc) <= budget) {
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      capHistories(histories, mid);
      if (bytes(doc) <= budget) lo = mid;
      else hi = mid - 1;
    }
  }
  capHistories(histories, lo);
  // Down to one entry each and still over: a history beside its entity's `latest` (a lab
  // test's) only repeats it, so it goes before any entity is left out.
  const repeated = lo === 1 && bytes(doc) > budget ? histories.filter(besideLatest) : [];
  capHistories(repeated, 0);
  const byPattern = new Map<string, Cut>();
  for (const h of histories) {
    const kept = repeated.includes(h) ? 0 : lo;
    if (h.list.length <= kept) continue;
    const c = byPattern.get(h.pattern) ?? { path: h.pattern, kept: 0, total: 0 };
    c.kept += kept;
    c.total += h.list.length;
    byPattern.set(h.pattern, c);
  }
  return [...byPattern.values()];
}

/** A list at `history` whose holder also states its newest entry as `latest`. */
const besideLatest = (h: ListSlot): boolean => h.key === "history" && !Array.isArray(h.holder) && isObj(h.holder.latest);

function leaveOutEntities(doc: unknown, budget: number): LeftOut[] {
  const out = new Map<string, LeftOut>();
  for (let round = 0; round < 100 && bytes(doc) > budget; round++) {
    const all = lists(doc).filter((s) => s.list.length > 1 && !isHistory(s.list));
    // Innermost first: a list none of whose items holds another such list (a block's
    // list of results goes before the view's list of blocks). Paths are walked in
    // document order, so a list's descendants follow it directly.
    const inner = all.filter((s, i) => !all[i + 1]?.path.startsWith(`${s.path}[`));
    let slot: ListSlot | undefined;
    let largest = -1;
    for (const s of inner) {
      const size = bytes(s.list);
      if (size > largest) [slot, largest] = [s, size];
    }
    if (!slot) break;
    const excess = bytes(doc) - budget;
    let keep = slot.list.length;
    for (let dropped = 0; keep > 1 && dropped < excess; ) dropped += bytes(slot.list[--keep]) + 1;
    set(slot, slot.list.slice(0, keep));
    const names = slot.list.slice(keep).map((x, i) => entityName(x, keep + i));
    const prev = out.get(slot.path);
    out.set(slot.path, { path: slot.path, kept: keep, total: prev?.total ?? slot.list.length, left_out: [...names, ...(prev?.left_out ?? [])] });
  }
  return [...out.values()];
}

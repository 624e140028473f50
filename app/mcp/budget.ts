/**
 * Size bounds for MCP answers. A model pays for every byte of a tool result with its
 * context window, so no answer is allowed to grow with the patient's history: lists are
 * paged (a cursor says where to go on) and single documents have their longest lists
 * shortened, always saying so in the answer.
 */

/** Largest tool result, in bytes of JSON text (about 5,000 tokens). @default 20_000 */
export const MAX_RESULT_BYTES = 20_000;

/** Largest resource body, in bytes: resources are attached whole by a client, so a little more room. @default 50_000 */
export const MAX_RESOURCE_BYTES = 50_000;

const CUT_MARK = "… [truncated]";

const bytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? "null");

/** JSON text of answers measured by `bounded`, so that an answer that fits is serialized once. */
const measured = new WeakMap<object, string>();

/** The JSON text of an answer (from `bounded`'s measurement when it took one). */
export function toJson(value: unknown): string {
  return (value !== null && typeof value === "object" ? measured.get(value) : undefined) ?? JSON.stringify(value);
}

/**
 * How many leading items of a list fit in `budget` once wrapped in the answer (`wrap([])`
 * gives the answer's envelope). Linear: each item is measured once. At least 1 when the
 * list is not empty, so a page always moves forward; a single oversized item is then
 * shrunk by the caller.
 */
export function fitCount<T>(items: readonly T[], wrap: (page: readonly T[]) => unknown, budget = MAX_RESULT_BYTES): number {
  let total = bytes(wrap([]));
  for (let i = 0; i < items.length; i++) {
    total += bytes(items[i]) + (i > 0 ? 1 : 0);
    if (total > budget) return Math.max(1, i);
  }
  return items.length;
}

/** One list that was shortened: where, and how many of how many items remain. */
export interface Cut {
  path: string;
  kept: number;
  total: number;
}

interface ArraySlot {
  path: string;
  holder: Record<string, unknown> | unknown[];
  key: string | number;
  list: unknown[];
  size: number;
}

/**
 * The list to halve: the largest array (by JSON size) with more than one item whose size
 * is spread over its items. An array whose bulk is one item (a view's blocks, one of
 * which holds a long list of notes) is passed over while another qualifies: halving it
 * would drop whole blocks to shorten the list inside one of them.
 */
function largestArray(root: unknown): ArraySlot | undefined {
  let best: ArraySlot | undefined;
  let lopsided: ArraySlot | undefined;
  const walk = (v: unknown, path: string, holder: ArraySlot["holder"] | null, key: string | number) => {
    if (Array.isArray(v)) {
      if (v.length > 1 && holder) {
        const size = bytes(v);
        const biggest = Math.max(...v.map(bytes));
        const slot = { path, holder, key, list: v, size };
        if (biggest <= size * 0.6) {
          if (!best || size > best.size) best = slot;
        } else if (!lopsided || size > lopsided.size) lopsided = slot;
      }
      v.forEach((x, i) => walk(x, `${path}[${i}]`, v, i));
    } else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) walk(x, path === "" ? k : `${path}.${k}`, v as Record<string, unknown>, k);
    }
  };
  walk(root, "", null, "");
  return best ?? lopsided;
}

/** Time-ordered oldest first (histories): keep the newest half, else the first half. */
function keepsTail(list: unknown[]): boolean {
  const ts = (x: unknown) => (x !== null && typeof x === "object" ? (x as { timestamp?: unknown }).timestamp : undefined);
  const a = ts(list[0]);
  const b = ts(list[list.length - 1]);
  return typeof a === "string" && typeof b === "string" && a < b;
}

/** The longest string over 200 characters, for documents whose size is one long text. */
function longestString(root: unknown): { holder: Record<string, unknown> | unknown[]; key: string | number; text: string } | undefined {
  let best: { holder: Record<string, unknown> | unknown[]; key: string | number; text: string } | undefined;
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach((x, i) => (typeof x === "string" ? consider(v, i, x) : walk(x)));
    else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        if (typeof x === "string") consider(v as Record<string, unknown>, k, x);
        else walk(x);
      }
    }
  };
  const consider = (holder: Record<string, unknown> | unknown[], key: string | number, text: string) => {
    if (text.length > 200 && (!best || text.length > best.text.length)) best = { holder, key, text };
  };
  walk(root);
  return best;
}

/**
 * A copy of `value` that fits `budget`: first cuts any text longer than a quarter of the
 * budget (one pasted note must not cost the rest of the answer), then halves the largest
 * list until it fits (keeping the newest half of a time-ordered history), then, if still
 * needed, cuts long texts further. The list cuts are reported, so the answer can say
 * what is missing; a cut text ends with "… [truncated]".
 */
export function shrink<T>(value: T, budget = MAX_RESULT_BYTES): { value: T; cuts: Cut[] } {
  if (bytes(value) <= budget) return { value, cuts: [] };
  const copy = JSON.parse(JSON.stringify(value)) as T;
  const cuts = new Map<string, Cut>();
  const longest = Math.floor(budget / 4);
  // A cut text is `longest` characters plus the mark: longer than that means not cut yet.
  for (let s = longestString(copy); s && s.text.length > longest + CUT_MARK.length && bytes(copy) > budget; s = longestString(copy)) {
    (s.holder as Record<string | number, unknown>)[s.key] = `${s.text.slice(0, longest)}${CUT_MARK}`;
  }
  for (let round = 0; round < 200 && bytes(copy) > budget; round++) {
    const slot = largestArray(copy);
    if (slot) {
      const keep = Math.floor(slot.list.length / 2);
      const next = keepsTail(slot.list) ? slot.list.slice(slot.list.length - keep) : slot.list.slice(0, keep);
      (slot.holder as Record<string | number, unknown>)[slot.key] = next;
      const prev = cuts.get(slot.path);
      cuts.set(slot.path, { path: slot.path, kept: keep, total: prev?.total ?? slot.list.length });
      continue;
    }
    const s = longestString(copy);
    if (!s) break;
    (s.holder as Record<string | number, unknown>)[s.key] = `${s.text.slice(0, Math.floor(s.text.length / 2))}${CUT_MARK}`;
  }
  return { value: copy, cuts: [...cuts.values()] };
}

/** `shrink`, marking the answer `truncated: true` with what was cut and how to see the rest. */
export function bounded<T extends object>(answer: T, hint: string, budget = MAX_RESULT_BYTES): T | (T & { truncated: true; truncated_lists: Cut[]; note: string }) {
  const text = JSON.stringify(answer);
  if (Buffer.byteLength(text) <= budget) {
    measured.set(answer, text);
    return answer;
  }
  // Room for the truncation note itself.
  const { value, cuts } = shrink(answer, budget - 1_000);
  return { ...value, truncated: true as const, truncated_lists: cuts, note: `The answer was over ${Math.round(budget / 1000)} kB; the lists named in truncated_lists were shortened. ${hint}` };
}

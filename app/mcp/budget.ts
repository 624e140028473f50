import { shrink, type Cut, type LeftOut } from "./shrink.js";

export type { Cut, LeftOut } from "./shrink.js";

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

/**
 * `answer` if it fits `budget`, else a copy cut by `shrink` (histories shortened to their
 * newest entries first, then entities left out by name), marked `truncated: true` with
 * what was cut and `hint`: how to get the rest.
 */
export function bounded<T extends object>(answer: T, hint: string, budget = MAX_RESULT_BYTES): T | (T & Truncated) {
  const text = JSON.stringify(answer);
  if (Buffer.byteLength(text) <= budget) {
    measured.set(answer, text);
    return answer;
  }
  let room = budget - 1_000;
  for (;;) {
    const { value, cuts, leftOut } = shrink(answer, room);
    const out = { ...value, truncated: true as const, truncated_lists: cuts, ...(leftOut.length ? { left_out: leftOut } : {}), note: truncationNote(budget, cuts, leftOut, hint) };
    const over = bytes(out) - budget;
    // The report of what was cut can itself be long (every entity named): make room for it.
    if (over <= 0 || room < budget / 4) return out;
    room -= over + 200;
  }
}

export interface Truncated {
  truncated: true;
  truncated_lists: Cut[];
  left_out?: LeftOut[];
  note: string;
}

function truncationNote(budget: number, cuts: Cut[], leftOut: LeftOut[], hint: string): string {
  const parts = [`The answer was over ${Math.round(budget / 1000)} kB, so it was shortened.`];
  if (cuts.length) parts.push("Histories keep their newest entries: truncated_lists gives, per kind of list, the entries kept of the total.");
  if (leftOut.length) {
    const named = leftOut.map((l) => `${l.path}: ${l.left_out.slice(0, 20).join(", ")}${l.left_out.length > 20 ? ` and ${l.left_out.length - 20} more` : ""}`);
    parts.push(`Left out whole (listed in left_out): ${named.join("; ")}.`);
  } else {
    parts.push("No entity was left out.");
  }
  parts.push(hint);
  return parts.join(" ");
}

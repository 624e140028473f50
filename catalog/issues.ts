import type { TSchema, Static } from "@sinclair/typebox";

/** One problem with a payload. `path` is relative to the payload, e.g. ["symptoms", 0, "score"]. */
export interface PayloadIssue {
  path: (string | number)[];
  message: string;
  /** The value as sent; for a missing field, the object that lacks it (see validatePayload). */
  value: unknown;
}

/**
 * A cross-field rule JSON Schema expresses badly. It runs only after the schema has
 * passed, so it may trust the payload's shape.
 */
export type Refinement = (payload: never) => PayloadIssue[];

/** A log type's schema and refinement; `S` keeps the schema's own type, from which its payload type derives (payloads.ts). */
export interface CatalogEntry<S extends TSchema = TSchema> {
  schema: S;
  refine?: Refinement;
}

/** Pairs a schema with its refinement, typing the refinement's payload from the schema. */
export function entry<S extends TSchema>(schema: S, refine?: (payload: Static<S>) => PayloadIssue[]): CatalogEntry<S> {
  return { schema, refine: refine };
}

export function issue(path: (string | number)[], message: string, value: unknown): PayloadIssue {
  return { path, message, value };
}

/** Runs `check` on every item of an optional array, collecting issues with the item index in the path. */
export function eachItem<T>(
  items: readonly T[] | undefined,
  base: (string | number)[],
  check: (item: T, path: (string | number)[]) => PayloadIssue[],
): PayloadIssue[] {
  if (items === undefined) return [];
  const out: PayloadIssue[] = [];
  for (const [i, item] of items.entries()) {
    for (const f of check(item, [...base, i])) out.push(f);
  }
  return out;
}

/** Reports a period whose end precedes its start; both ends are already pattern-checked. */
export function checkPeriod(
  period: { start_datetime?: string; end_datetime?: string } | undefined,
  path: (string | number)[],
): PayloadIssue[] {
  if (period?.start_datetime === undefined || period.end_datetime === undefined) return [];
  const start = Date.parse(period.start_datetime);
  const end = Date.parse(period.end_datetime);
  if (Number.isNaN(start) || Number.isNaN(end)) {
    const bad = Number.isNaN(start) ? "start_datetime" : "end_datetime";
    return [issue([...path, bad], "is not a real calendar datetime", period[bad])];
  }
  if (end < start) {
    return [issue([...path, "end_datetime"], `end_datetime ${period.end_datetime} is before start_datetime ${period.start_datetime}`, period.end_datetime)];
  }
  return [];
}

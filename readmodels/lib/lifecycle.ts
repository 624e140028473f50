import type { LogRecord } from "../log-record.js";
import type { Clocks } from "./clocks.js";
import { actionOf, applyEntry, type EntryMeta } from "./entities.js";
import { findByIdentity, identityKey, type Identity } from "./identity.js";
import { HISTORY, insertSorted } from "./lists.js";
import { normName, type Obj } from "./payload.js";
import { maxTime, minTime, type Stamped } from "./time.js";

/** Names an entity keeps (see Aliased). */
export const ALIASES = 10;

/**
 * An entity that answers to every name it was reported under: a report matched by code
 * may rename it, and a later report naming no code must still find it by an earlier name.
 */
export interface Aliased {
  /** Normalized, sorted; the first ALIASES by event time (the current name matches anyway). */
  aliases: string[];
}

/**
 * `aliases` with `name` (normalized) in its sorted place. A full list takes no more: the
 * fold runs in event-time order, so the names kept are the first by event time, the same
 * set whatever order the logs arrived in.
 */
export function withAlias(aliases: string[], name: string, max = ALIASES): string[] {
  const n = normName(name);
  if (aliases.length >= max || aliases.includes(n)) return aliases;
  let i = aliases.length;
  while (i > 0 && aliases[i - 1]! > n) i--;
  return [...aliases.slice(0, i), n, ...aliases.slice(i)];
}

/** Bookkeeping of a lifecycle-tracked entity: first and last report, and its report history. */
export interface Lifecycle<H extends Stamped> extends EntryMeta {
  first_reported_at: string;
  last_reported_at: string;
  /** Sorted by timestamp, ties in fold order; the last HISTORY reports. */
  history: H[];
}

export interface LifecycleWrite<E extends Lifecycle<H>, H extends Stamped> {
  list: readonly E[];
  clocks: Clocks;
  ns: string;
  item: Obj;
  probe: Identity;
  identityOf: (e: E) => Identity;
  fields: readonly string[];
  /** Object fields merged at leaf level like extensions. */
  treeFields?: readonly string[];
  blank: Omit<E, keyof Lifecycle<H>>;
  history: H;
  log: LogRecord;
  /** Derives fields from the latest history item (status, current score), so the current
   * value is the one of the latest report by event time, not of the last applied. */
  settle?: (e: E) => E;
  /** The history item of a report that creates the entity, given the entity it made: a
   * report that left a field to the blank's default (status "active") records that default,
   * so the first report says what the entity then was. */
  created?: (h: H, e: E) => H;
  /** The entity is Aliased (its blank has `aliases`): the probe's name joins its aliases. */
  aliases?: boolean;
}

/**
 * Upserts (or removes, on action remove) one lifecycle-tracked entity: its fields merge
 * like any keyed entry, then the report joins its history.
 */
export function applyLifecycle<E extends Lifecycle<H>, H extends Stamped>(w: LifecycleWrite<E, H>): { list: readonly E[]; clocks: Clocks } {
  const index = findByIdentity(w.list, w.probe, w.identityOf);
  const keyOf = (e: E) => identityKey(w.identityOf(e));
  const action = actionOf(w.item);
  const blank = Object.assign({}, w.blank, { first_reported_at: w.log.timestamp, last_reported_at: w.log.timestamp, history: [] });
  const r = applyEntry<E>({
    list: w.list, clocks: w.clocks, ns: w.ns, index, keyOf, action, patch: w.item, fields: w.fields,
    blank: blank as unknown as Omit<E, keyof EntryMeta>, log: w.log, source: w.log.payload.source, treeFields: w.treeFields,
  });
  if (action === "remove") return r;
  const at = index >= 0 ? index : r.list.length - 1;
  const e = r.list[at]!;
  let next: E = {
    ...e,
    first_reported_at: minTime(e.first_reported_at, w.log.timestamp),
    last_reported_at: maxTime(e.last_reported_at, w.log.timestamp),
    history: insertSorted(e.history, index < 0 && w.created ? w.created(w.history, e) : w.history, HISTORY),
  };
  // The key exists from the blank, so setting it keeps the object's shape.
  if (w.aliases && w.probe.name) (next as unknown as Aliased).aliases = withAlias((e as unknown as Aliased).aliases ?? [], w.probe.name);
  if (w.settle) next = w.settle(next);
  const list = [...r.list];
  list[at] = next;
  return { list, clocks: r.clocks };
}

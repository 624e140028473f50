import type { LogRecord } from "../log-record.js";
import { dropClocks, moveClocks, patchObject, patchWrites, type Clocks } from "./clocks.js";
import { addSource, removeAt, replaceAt, type SourceRef } from "./lists.js";
import { str, type Obj } from "./payload.js";
import { maxTime } from "./time.js";

/** Whether two objects have the same keys in the same order. */
function sameKeys(a: Obj, b: Obj): boolean {
  if (a === b) return true;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return false;
  return true;
}

/** Multi-entry actions; "delete" is the medication list's spelling of remove. Default add. */
export type Action = "add" | "update" | "remove";

export function actionOf(o: Obj): Action {
  const a = str(o, "action");
  return a === "remove" || a === "delete" ? "remove" : a === "update" ? "update" : "add";
}

/** Bookkeeping every keyed entry carries: when it last changed (event time) and who said so. */
export interface EntryMeta {
  updated_at: string;
  sources: SourceRef[];
  extensions: Obj;
}

export interface EntryWrite<E extends EntryMeta> {
  list: readonly E[];
  clocks: Clocks;
  /** Clock namespace of this list inside its module. */
  ns: string;
  /** Index of the entry the write is about, or -1. */
  index: number;
  /** The entry's identity key, used for its clock paths. */
  keyOf: (e: E) => string;
  action: Action;
  /** Field values of this write (absent fields are left alone; null clears). */
  patch: Obj;
  fields: readonly string[];
  /** The entry created when none matches (every field present, unknowns null). */
  blank: Omit<E, keyof EntryMeta>;
  log: LogRecord;
  source?: unknown;
  treeFields?: readonly string[];
  /**
   * Patch-style entries: a write that changes none of the entry's values (or, for an unknown
   * entry, sets none) leaves the list as it was, so the log is not one of its sources; the
   * field clocks still move to a later write of an equal value.
   */
  onlyChanges?: boolean;
}

/**
 * One add/update/remove on a keyed list. Add and update are both upserts (an update of an
 * unknown entry creates it; an add of a known one updates it) since the sender's intent is
 * the same; fields merge one by one under per-field clocks. Remove of an unknown entry is
 * a no-op.
 */
export function applyEntry<E extends EntryMeta>(w: EntryWrite<E>): { list: readonly E[]; clocks: Clocks } {
  const existing = w.index >= 0 ? w.list[w.index] : undefined;
  if (w.action === "remove") {
    if (!existing) return { list: w.list, clocks: w.clocks };
    return { list: removeAt(w.list, w.index), clocks: dropClocks(w.clocks, [w.ns, w.keyOf(existing)]) };
  }
  // Not compared with the blank, which already holds the identity fields: a new entry is
  // made by a log that sets any field.
  if (w.onlyChanges && !existing && !patchWrites(w.patch, w.fields, w.treeFields, false)) return { list: w.list, clocks: w.clocks };
  const ts = w.log.timestamp;
  const start = (existing ?? Object.assign({}, w.blank, { extensions: {}, updated_at: ts, sources: [] })) as E;
  const oldKey = existing ? w.keyOf(existing) : "\u0000new";
  const r = patchObject(start as unknown as Obj, w.clocks, [w.ns, oldKey], w.patch, w.fields, ts, w.treeFields, w.blank);
  if (w.onlyChanges && existing && r.value === start) return { list: w.list, clocks: r.clocks };
  // Cleared fields read as null, like fields never given, so the entry keeps one shape
  // (in the blank's key order first, as before a clear). An update that kept the entry's
  // keys is a clone, which V8 makes from the entry's hidden class in one step; building
  // the object key by key gives large entries a slow dictionary-mode object.
  let next: Record<string, unknown>;
  if (existing && sameKeys(r.value, existing as unknown as Obj)) next = { ...r.value };
  else {
    next = {};
    for (const k in w.blank) next[k] = null;
    Object.assign(next, r.value);
  }
  next.updated_at = existing ? maxTime(existing.updated_at, ts) : ts;
  next.sources = addSource(existing?.sources, w.log, w.source);
  return { list: replaceAt(w.list, w.index, next as unknown as E), clocks: moveClocks(r.clocks, [w.ns, oldKey], [w.ns, w.keyOf(next as unknown as E)]) };
}

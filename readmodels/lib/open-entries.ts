import type { LogRecord } from "../log-record.js";
import type { Clocks } from "./clocks.js";
import { actionOf, applyEntry, type EntryMeta } from "./entities.js";
import { itemExtensions } from "./extensions.js";
import { isObj, objs, without, type Obj } from "./payload.js";

/**
 * Entries of the types the spec names but does not shape (procedure, immunization,
 * device, family_history): their schemas are being designed beside this code, so the
 * reducers read the fields any such schema is likely to have under their usual names,
 * keep everything else under `details`, and never fail on an unexpected shape.
 */
export interface OpenEntry extends EntryMeta {
  /** The identity this entry is kept under (documented per module). */
  key: string;
  /** The item's other fields, merged at leaf level, latest event time winning. */
  details: Obj;
}

/**
 * The items of a payload: the objects of its first present list field, else the payload
 * itself. The payload's source and extensions describe every item it lists: a listed item
 * takes the payload's source when it has none, and the payload's extensions under its own.
 */
export function itemsOf(p: Obj, listFields: readonly string[]): Obj[] {
  for (const f of listFields) if (Array.isArray(p[f])) return objs(p, f).map((i) => ({ ...i, source: i.source ?? p.source, extensions: itemExtensions(p, i) }));
  return [p];
}

export function applyOpen<E extends OpenEntry>(args: {
  list: readonly E[];
  clocks: Clocks;
  ns: string;
  key: string;
  /** The named fields of this item; null or undefined leave the entry's value alone. */
  fields: Omit<E, keyof OpenEntry>;
  item: Obj;
  /** Item field names already read into `fields`, so they are not repeated under details. */
  consumed: readonly string[];
  log: LogRecord;
}): { list: readonly E[]; clocks: Clocks } {
  const named = Object.fromEntries(Object.entries(args.fields as Obj).filter(([, v]) => v !== null && v !== undefined));
  const details = without(args.item, [...args.consumed, "source", "extensions", "action"]);
  const patch: Obj = { ...named, key: args.key, details, extensions: isObj(args.item.extensions) ? args.item.extensions : undefined };
  const blank = { key: args.key, ...Object.fromEntries(Object.keys(args.fields as Obj).map((k) => [k, null])), details: {} };
  return applyEntry<E>({
    list: args.list, clocks: args.clocks, ns: args.ns,
    index: args.list.findIndex((e) => e.key === args.key),
    keyOf: (e) => e.key,
    // These types correct a wrong entry with a FHIR-style status rather than an action.
    action: args.item.status === "entered_in_error" ? "remove" : actionOf(args.item),
    patch, fields: ["key", ...Object.keys(args.fields)], treeFields: ["details"],
    blank: blank as unknown as Omit<E, keyof EntryMeta>,
    log: args.log, source: args.item.source ?? args.log.payload.source,
  });
}

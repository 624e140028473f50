import type { LogRecord } from "../log-record.js";
import type { ModuleState } from "../module.js";
import { patchObject, patchWrites } from "./clocks.js";
import { addSource, type SourceRef } from "./lists.js";
import type { Obj } from "./payload.js";

/** A patch-style document: merged fields, leaf-merged extensions, and who said so. */
export interface PatchDoc {
  extensions: Obj;
  sources: SourceRef[];
}

/**
 * Evolve of a patch-style module (demographics, preferences, social): each field present
 * in the payload is written if no newer log wrote it; `treeFields` and `extensions`
 * merge at leaf level. Field clocks make the result independent of arrival order.
 * A log that writes nothing (`{}`, or only a source) is no source of the document.
 */
export function evolvePatchDoc<D extends PatchDoc>(
  s: ModuleState<D>,
  log: LogRecord,
  fields: readonly string[],
  treeFields: readonly string[] = [],
): ModuleState<D> {
  // A test of the log alone, not of what it changes: applied unsorted (as these documents
  // allow), a log restating the values held may be older than the one that set them, and
  // so have set them itself; leaving it out would make the sources follow arrival order.
  if (!patchWrites(log.payload, fields, treeFields)) return s;
  const r = patchObject(s.doc as unknown as Obj, s.clocks, [], log.payload, fields, log.timestamp, treeFields);
  const doc = { ...(r.value as unknown as D), sources: addSource(s.doc.sources, log) };
  return { doc, clocks: r.clocks };
}

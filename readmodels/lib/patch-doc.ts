import type { LogRecord } from "../log-record.js";
import type { ModuleState } from "../module.js";
import { patchObject } from "./clocks.js";
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
 */
export function evolvePatchDoc<D extends PatchDoc>(
  s: ModuleState<D>,
  log: LogRecord,
  fields: readonly string[],
  treeFields: readonly string[] = [],
): ModuleState<D> {
  const r = patchObject(s.doc as unknown as Obj, s.clocks, [], log.payload, fields, log.timestamp, treeFields);
  const doc = { ...(r.value as unknown as D), sources: addSource(s.doc.sources, log) };
  return { doc, clocks: r.clocks };
}

import { patchObject, type Clocks, type Path } from "./clocks.js";
import { isObj, type Obj } from "./payload.js";

/**
 * `top` over `base` at leaf level. Null leaves are kept: merged into an entry they clear
 * its leaf. An empty object merges nothing, as in patchObject.
 */
function overlay(base: unknown, top: unknown): unknown {
  if (top === undefined || (isObj(top) && Object.keys(top).length === 0)) return base;
  if (!isObj(base) || !isObj(top)) return top;
  const out: Obj = { ...base };
  for (const k of Object.keys(top)) out[k] = overlay(base[k], top[k]);
  return out;
}

/**
 * The extensions one item of a log brings: the payload's (which describe the whole log),
 * then the item's own over them, so the item wins a leaf both name. Undefined when neither
 * sent any.
 */
export function itemExtensions(payload: Obj, item: Obj): Obj | undefined {
  const p = isObj(payload.extensions) ? payload.extensions : undefined;
  const i = item === payload || !isObj(item.extensions) ? undefined : item.extensions;
  if (i === undefined) return p;
  return p === undefined ? i : (overlay(p, i) as Obj);
}

/**
 * Merges `incoming` into an entry's extensions at leaf level under the write clocks at
 * `path` (the entry's place in the module), latest event time winning per leaf, so an
 * older log applied later never overwrites a newer leaf.
 */
export function mergeExtensions(current: Obj, clocks: Clocks, path: Path, incoming: Obj | undefined, ts: string): { extensions: Obj; clocks: Clocks } {
  if (incoming === undefined) return { extensions: current, clocks };
  const r = patchObject({ extensions: current }, clocks, path, { extensions: incoming }, [], ts);
  return { extensions: r.value.extensions as Obj, clocks: r.clocks };
}

import { isObj, type Obj } from "./payload.js";
import { cmpTime } from "./time.js";

/**
 * Per-leaf write clocks: the event timestamp of the last write of each leaf path, kept
 * beside a module's document (never inside the payload clients read). With them a patch
 * or an `extensions` leaf from an older log never overwrites a newer one, even when the
 * older log is applied later, so patch-style state does not depend on arrival order.
 * Keys are JSON-encoded paths (unambiguous whatever the segments contain). Equal
 * timestamps: the write applied later wins, which is acceptance order in a sorted fold.
 */
export type Clocks = Readonly<Record<string, string>>;
export type Path = readonly string[];

export interface Versioned<T> {
  value: T;
  clocks: Clocks;
}

const keyOf = (p: Path): string => JSON.stringify(p);
const childPrefix = (p: Path): string => (p.length === 0 ? "[" : keyOf(p).slice(0, -1) + ",");
const newer = (clock: string | undefined, ts: string): boolean => clock !== undefined && cmpTime(clock, ts) > 0;

/**
 * A working copy that copies on write: only the objects along a written path are
 * copied (shallowly), never the whole document, because entries carry long histories.
 * The inputs are never touched, and are returned when nothing changed.
 */
class Draft {
  doc: Obj;
  clocks: Record<string, string>;
  changed = false;
  clocksChanged = false;
  /** Objects this draft made (safe to mutate); everything else belongs to the input. */
  private readonly owned = new WeakSet<object>();

  constructor(
    private readonly root: Obj,
    private readonly rootClocks: Clocks,
    private readonly base: Path,
    /** Top-level keys that a clear sets to null rather than deletes (see patchObject). */
    private readonly nullKeys?: Obj,
  ) {
    this.doc = root;
    this.clocks = rootClocks;
  }

  result(): Versioned<Obj> {
    return { value: this.changed ? this.doc : this.root, clocks: this.clocksChanged ? this.clocks : this.rootClocks };
  }

  private setClockKey(k: string, ts: string | undefined): void {
    if (this.clocks[k] === ts) return;
    if (!this.clocksChanged) this.clocks = { ...this.rootClocks };
    if (ts === undefined) delete this.clocks[k];
    else this.clocks[k] = ts;
    this.clocksChanged = true;
  }

  /** The object at `p`, made writable: it and its ancestors are copied once, created if missing. */
  private writable(p: Path): Obj {
    if (!this.owned.has(this.doc)) {
      this.doc = { ...this.doc };
      this.owned.add(this.doc);
    }
    let node = this.doc;
    for (const seg of p) {
      let child = node[seg];
      if (!isObj(child)) child = {};
      else if (!this.owned.has(child)) child = { ...child };
      if (child !== node[seg]) {
        node[seg] = child;
        this.owned.add(child as Obj);
      }
      node = child as Obj;
    }
    return node;
  }

  private set(p: Path, value: unknown): void {
    const current = this.get(p);
    if (current === value || (typeof value === "object" && JSON.stringify(current) === JSON.stringify(value))) return;
    const node = this.writable(p.slice(0, -1));
    node[p[p.length - 1]!] = typeof value === "object" && value !== null ? structuredClone(value) : value;
    this.changed = true;
  }

  private get(p: Path): unknown {
    let node: unknown = this.doc;
    for (const seg of p) node = isObj(node) ? node[seg] : undefined;
    return node;
  }

  /** Deletes a leaf and prunes parents left empty, so "set then cleared" equals "never set". */
  private delete(p: Path): void {
    let probe: unknown = this.doc;
    for (const seg of p.slice(0, -1)) {
      probe = isObj(probe) ? probe[seg] : undefined;
      if (!isObj(probe)) return;
    }
    const leaf = p[p.length - 1]!;
    if (!(leaf in (probe as Obj))) return;
    const chain: Obj[] = [this.writable([])];
    for (let i = 0; i < p.length - 1; i++) chain.push(this.writable(p.slice(0, i + 1)));
    delete chain[chain.length - 1]![leaf];
    this.changed = true;
    // Top-level containers (`extensions`) stay, as every document starts with them.
    for (let i = chain.length - 1; i > 1 && Object.keys(chain[i]!).length === 0; i--) delete chain[i - 1]![p[i - 1]!];
  }

  /**
   * Writes one leaf (null deletes) at `p` with timestamp `ts`. The clocks are a register per
   * path holding the latest write time (so they merge by max, in any order), and the
   * document shows exactly the leaves whose write is newer than every write above and
   * below them: a later write to `a` hides an older `a.c`, and a later write to `a.c`
   * supersedes an older scalar `a`. Both rules hold whatever order the writes come in.
   */
  leaf(p: Path, value: unknown, ts: string, scanBelow = true): void {
    const full = [...this.base, ...p];
    // The keys of every prefix of the path, built once: keys[i] is keyOf(full.slice(0, i + 1)).
    const keys: string[] = [];
    let open = "[";
    for (let i = 0; i < full.length; i++) {
      open += (i > 0 ? "," : "") + JSON.stringify(full[i]);
      keys.push(open + "]");
    }
    const own = keys[keys.length - 1]!;
    if (newer(this.clocks[own], ts)) return;
    this.setClockKey(own, ts);
    for (let i = this.base.length; i < full.length - 1; i++) if (newer(this.clocks[keys[i]!], ts)) return;
    for (let i = 1; i < p.length; i++) {
      const above = this.get(p.slice(0, i));
      if (above !== undefined && !isObj(above)) this.delete(p.slice(0, i));
    }
    const prefix = open + ",";
    let newerBelow = false;
    let below: string[] | undefined;
    // for-in, not Object.keys: no array per leaf write, and deletes wait until the scan ends.
    if (scanBelow) for (const k in this.clocks) {
      if (!k.startsWith(prefix)) continue;
      if (newer(this.clocks[k], ts)) newerBelow = true;
      else (below ??= []).push(k);
    }
    for (const k of below ?? []) this.delete((JSON.parse(k) as string[]).slice(this.base.length));
    if (newerBelow) return;
    if (value !== null && value !== undefined) this.set(p, value);
    else if (p.length === 1 && this.nullKeys !== undefined && p[0]! in this.nullKeys) this.set(p, null);
    else this.delete(p);
  }

  /** Merges a plain object at leaf level: each non-object value is one leaf (null deletes it). */
  tree(p: Path, incoming: Obj, ts: string): void {
    for (const [k, v] of Object.entries(incoming)) {
      // An empty object merges nothing (as in JSON merge patch); it is not a value to store.
      if (v === undefined || (isObj(v) && Object.keys(v).length === 0)) continue;
      if (isObj(v)) this.tree([...p, k], v, ts);
      else this.leaf([...p, k], v, ts);
    }
  }
}

/**
 * Applies a patch to `root`: each listed field present in `patch` is one leaf write (null
 * clears it); fields named in `treeFields` (always `extensions`) merge at leaf level.
 * `base` prefixes the clock paths, so several entries can share one clock map.
 * A cleared top-level field that `nullKeys` has (an entry's blank, whose fields read null
 * when unknown) becomes null instead of being deleted: the same state once the entry is
 * completed from its blank, without `delete`, which turns the object into a slow
 * dictionary-mode object in V8 (and every later copy and read of it with it).
 */
export function patchObject(
  root: Obj,
  clocks: Clocks,
  base: Path,
  patch: Obj,
  fields: readonly string[],
  ts: string,
  treeFields: readonly string[] = [],
  nullKeys?: Obj,
): Versioned<Obj> {
  const d = new Draft(root, clocks, base, nullKeys);
  for (const f of [...fields, "extensions", ...treeFields]) {
    const v = patch[f];
    if (v === undefined) continue;
    if (f === "extensions" || treeFields.includes(f)) {
      if (isObj(v)) d.tree([f], v, ts);
      // A plain field is only ever written whole (tree fields are the only ones merged
      // below their top), so no clock can sit below it: skip the scan of every clock.
    } else d.leaf([f], v, ts, false);
  }
  return d.result();
}

/**
 * Whether patchObject would write anything at all with `patch`, whatever the document: a
 * listed field present, or a leaf of `extensions` or of a tree field (empty objects merge
 * nothing). `clears` false leaves out nulls, which only clear what is there.
 */
export function patchWrites(patch: Obj, fields: readonly string[], treeFields: readonly string[] = [], clears = true): boolean {
  for (const f of fields) {
    const v = patch[f];
    if (v !== undefined && (clears || v !== null)) return true;
  }
  if (isObj(patch.extensions) && hasLeaf(patch.extensions, clears)) return true;
  for (const f of treeFields) {
    const v = patch[f];
    if (isObj(v) && hasLeaf(v, clears)) return true;
  }
  return false;
}

function hasLeaf(o: Obj, clears: boolean): boolean {
  for (const k in o) {
    const v = o[k];
    if (isObj(v) ? hasLeaf(v, clears) : v !== undefined && (clears || v !== null)) return true;
  }
  return false;
}

/** The event time of the last write at `path`, if one was recorded: which log set a value. */
export function clockAt(clocks: Clocks, path: Path): string | undefined {
  return clocks[keyOf(path)];
}

/** Forgets the clocks under `base` (an entry that was removed). */
export function dropClocks(clocks: Clocks, base: Path): Clocks {
  const prefix = childPrefix(base);
  const keys = Object.keys(clocks).filter((k) => k.startsWith(prefix));
  if (keys.length === 0) return clocks;
  const out = { ...clocks };
  for (const k of keys) delete out[k];
  return out;
}

/** Moves the clocks under `from` to `to` (an entry whose identity key improved, e.g. gained a code). */
export function moveClocks(clocks: Clocks, from: Path, to: Path): Clocks {
  if (keyOf(from) === keyOf(to)) return clocks;
  const prefix = childPrefix(from);
  const keys = Object.keys(clocks).filter((k) => k.startsWith(prefix));
  if (keys.length === 0) return clocks;
  const out = { ...clocks };
  for (const k of keys) {
    const rest = (JSON.parse(k) as string[]).slice(from.length);
    out[keyOf([...to, ...rest])] = out[k]!;
    delete out[k];
  }
  return out;
}

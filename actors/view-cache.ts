import { renderView, VIEW_INPUTS, type View, type ViewType } from "../readmodels/views/index.js";
import { MODEL_FINGERPRINT, type StoredPatientState } from "./state-store.js";

/** A rendered view as Redis keeps it: the state position and reducers it was rendered from. */
interface CachedView {
  applied_seq: number;
  fingerprint: string;
  view: View;
}

export function encodeCachedView(stored: StoredPatientState, view: View): string {
  return JSON.stringify({ applied_seq: stored.applied_seq, fingerprint: stored.fingerprint, view } satisfies CachedView);
}

/** `types` rendered from `stored`, encoded as Redis keeps them (field per view type). */
export function renderCachedViews(stored: StoredPatientState, types: readonly ViewType[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const type of types) out[type] = encodeCachedView(stored, renderView(type, stored.state));
  return out;
}

/** Those of `types` whose stored copy (`cached`, in the same order) does not describe `stored`. */
export function staleViews(stored: StoredPatientState, types: readonly ViewType[], cached: readonly (string | null)[]): ViewType[] {
  return types.filter((t, i) => !currentCachedView(cached[i] ?? null, stored, t));
}

/**
 * Stream sequence at which the last input of `type` changed: a view rendered at or after it
 * is current, however many logs touched other modules since. Without the per-module
 * record (a state saved by an older build), only a render at the exact sequence counts.
 */
export function lastInputChange(stored: StoredPatientState, type: ViewType): number {
  if (!stored.module_seq) return stored.applied_seq;
  let last = 0;
  for (const k of VIEW_INPUTS[type]) last = Math.max(last, stored.module_seq[k] ?? 0);
  return last;
}

/** The cached view when it still describes `stored`; null when it must be rendered again. */
export function currentCachedView(raw: string | null, stored: StoredPatientState, type: ViewType): View | null {
  if (!raw) return null;
  const c = JSON.parse(raw) as Partial<CachedView>;
  if (c.fingerprint !== MODEL_FINGERPRINT || stored.fingerprint !== MODEL_FINGERPRINT) return null;
  if (c.applied_seq === undefined || c.applied_seq < lastInputChange(stored, type)) return null;
  return c.view ?? null;
}

/** The head of encodeCachedView's text, as JSON.stringify writes it. */
const CACHED_HEAD = /^\{"applied_seq":(\d+),"fingerprint":"([^"\\]*)","view":\{/;
const BLOCKS_KEY = ',"blocks":';

/**
 * A cached view as the raw view read answers it (`{patient_id, view_type, view_id,
 * valid_from, valid_to, content: {blocks, temp}}`), cut from the stored text without
 * parsing it, when it is still current; null when it is not, or when the text is not
 * laid out as encodeCachedView writes it (the caller then parses, see currentCachedView).
 * The view's head (type, id, times) holds no object, so the first `,"blocks":` after it
 * is the view's own; blocks are stored with the fields a read answers, in its order
 * (readmodels/views/lib.ts, block).
 */
export function currentCachedViewAnswer(raw: string | null, stored: StoredPatientState, type: ViewType, patientId: string): string | null {
  if (!raw || stored.fingerprint !== MODEL_FINGERPRINT) return null;
  const head = CACHED_HEAD.exec(raw);
  if (!head || head[2] !== MODEL_FINGERPRINT || Number(head[1]) < lastInputChange(stored, type)) return null;
  const start = head[0].length;
  const blocks = raw.indexOf(BLOCKS_KEY, start);
  if (blocks < 0 || !raw.endsWith("}}") || !raw.startsWith(`"view_type":${JSON.stringify(type)},`, start)) return null;
  return `{"patient_id":${JSON.stringify(patientId)},${raw.slice(start, blocks)},"content":{${raw.slice(blocks + 1, -2)}}}`;
}

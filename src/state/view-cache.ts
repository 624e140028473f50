import { renderView, VIEW_INPUTS, type View, type ViewType } from "../../readmodels/views/index.js";
import { MODEL_FINGERPRINT, type StoredPatientState } from "../../infra/redis/state-store.js";

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
 * is current, however many logs touched other modules since.
 */
export function lastInputChange(stored: StoredPatientState, type: ViewType): number {
  let last = 0;
  for (const k of VIEW_INPUTS[type]) last = Math.max(last, stored.module_seq[k] ?? 0);
  return last;
}

/** The cached view when it still describes `stored`; null when it must be rendered again. */
export function currentCachedView(raw: string | null, stored: StoredPatientState, type: ViewType): View | null {
  if (!raw) return null;
  // Under the current fingerprint, both are in the current layout (see STATE_LAYOUT_VERSION).
  const c = JSON.parse(raw) as CachedView;
  if (c.fingerprint !== MODEL_FINGERPRINT || stored.fingerprint !== MODEL_FINGERPRINT) return null;
  return c.applied_seq < lastInputChange(stored, type) ? null : c.view;
}

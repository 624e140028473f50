import { renderView, VIEW_INPUTS, VIEWS_VERSION, type View, type ViewType } from "../../readmodels/views/index.js";
import { MODEL_FINGERPRINT, type StoredPatientState } from "../../infra/redis/state-store.js";
import { localDate } from "../../readmodels/lib/time.js";

/** A rendered view as Redis keeps it: the state position, reducers and renderers it was rendered from. */
interface CachedView {
  applied_seq: number;
  fingerprint: string;
  /** VIEWS_VERSION of the renderer (absent: rendered before there was one). */
  views_version?: number;
  view: View;
}

export function encodeCachedView(stored: StoredPatientState, view: View): string {
  return JSON.stringify({ applied_seq: stored.applied_seq, fingerprint: stored.fingerprint, views_version: VIEWS_VERSION, view } satisfies CachedView);
}

/** `types` rendered from `stored` for reads at `readAt` (their week ends that day), encoded as Redis keeps them (field per view type). */
export function renderCachedViews(stored: StoredPatientState, types: readonly ViewType[], readAt: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const type of types) out[type] = encodeCachedView(stored, renderView(type, stored.state, readAt));
  return out;
}

/** Those of `types` whose stored copy (`cached`, in the same order) does not describe `stored` read at `readAt`. */
export function staleViews(stored: StoredPatientState, types: readonly ViewType[], cached: readonly (string | null)[], readAt: string): ViewType[] {
  return types.filter((t, i) => !currentCachedView(cached[i] ?? null, stored, t, readAt));
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

/**
 * The cached view when it still describes `stored` read at `readAt`: rendered after its
 * inputs last changed, with its week ending on the day of the read in the patient's zone
 * (a view rendered yesterday counts yesterday's week), and before it expires (a dose's
 * window closed since); null when it must be rendered again.
 */
export function currentCachedView(raw: string | null, stored: StoredPatientState, type: ViewType, readAt: string): View | null {
  if (!raw) return null;
  // Under the current fingerprint, both are in the current layout (see STATE_LAYOUT_VERSION).
  const c = JSON.parse(raw) as CachedView;
  if (c.fingerprint !== MODEL_FINGERPRINT || stored.fingerprint !== MODEL_FINGERPRINT || c.views_version !== VIEWS_VERSION) return null;
  if (c.view.window?.last_day !== localDate(readAt, stored.state.timezone)) return null;
  if (c.view.expires_at !== undefined && readAt >= c.view.expires_at) return null;
  return c.applied_seq < lastInputChange(stored, type) ? null : c.view;
}

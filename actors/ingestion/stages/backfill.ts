import { newId } from "../../../src/ids.js";
import { readDoc } from "../../../src/ingestion/staging.js";
import { VIEW_TYPES, type ViewType } from "../../../readmodels/views/index.js";
import { MODEL_FINGERPRINT, type StoredPatientState } from "../../../infra/redis/state-store.js";
import { renderCachedViews, staleViews } from "../../../src/state/view-cache.js";
import type { StageInput } from "../job-machine.js";
import { DOCS, forEachLimited, PermanentError, retryStorage, sleep, throwIfAborted, type StageDeps, type StageFn } from "../stage-deps.js";

const CONCURRENCY = 16;

/**
 * BACKFILLING, the linked view-backfill job: for every patient the job replayed, once the
 * state engine has applied the patient's logs, makes sure each chosen view (all views
 * when none were chosen) is stored rendered from that state. Views the engine already
 * re-rendered are left alone; patients taken out of the job are passed by. Its id and
 * status are the job's view_backfill_job_id and backfill_status; POST .../retry-backfill
 * runs it again.
 */
export const backfillStage: StageFn<StageInput & { summary_types: string[] | null }, void> = async (deps, job, input, signal) => {
  const r = job.record;
  r.view_backfill_job_id ??= newId("job");
  Object.assign(r, { backfill_status: "running", backfill_patients_done: 0, stage_fraction: 0 });
  await job.save();
  try {
    const listed = await retryStorage(() => readDoc<string>(deps.staging, input.job_id, DOCS.replay), signal, deps.storageRetryMs);
    if (listed === null) throw new Error("the job's patient list is no longer kept");
    const removed = new Set(r.removed_patients);
    const list = removed.size > 0 ? listed.filter((p) => !removed.has(p)) : listed;
    r.backfill_patients_total = list.length;
    const types = (input.summary_types && input.summary_types.length > 0 ? input.summary_types : VIEW_TYPES) as ViewType[];
    // The engine applies patients in stream order: one may wait long while others advance.
    const pace = { last: Date.now() };
    await forEachLimited(list, CONCURRENCY, signal, async (patientId) => {
      // Redis or NATS restarting: the patient is looked at again.
      await retryStorage(() => ensureViews(deps, input.project_id, patientId, types, signal, pace), signal, deps.storageRetryMs);
      pace.last = Date.now();
      r.backfill_patients_done++;
      r.stage_fraction = r.backfill_patients_done / list.length;
      job.touch();
    });
    r.backfill_status = "completed";
  } catch (err) {
    // Stopped by a shutdown: it resumes on start, so it has not failed.
    if (!signal.aborted) r.backfill_status = "failed";
    throw err;
  } finally {
    await job.save();
  }
};

/** Waits until the engine has applied the patient's logs, then stores the chosen views it has not rendered. */
async function ensureViews(deps: StageDeps, projectId: string, patientId: string, types: ViewType[], signal: AbortSignal, pace: { last: number }): Promise<void> {
  const stallMs = deps.backfillStallMs ?? 300_000;
  let applied: StoredPatientState;
  let lastSeq = -1;
  let since = Date.now();
  for (let delay = 10; ; delay = Math.min(delay * 2, 500)) {
    const part = await deps.stateStore.loadPart(projectId, patientId, []);
    const seq = part.stored?.applied_seq ?? 0;
    if (part.stored === null && part.accepted === 0) return; // nothing stored for this patient
    if (part.stored && seq >= part.accepted && part.stored.fingerprint === MODEL_FINGERPRINT) {
      applied = part.stored;
      break;
    }
    if (seq !== lastSeq) {
      lastSeq = seq;
      since = Date.now();
    } else if (Date.now() - Math.max(since, pace.last) > stallMs) {
      throw new PermanentError(`the state of patient ${patientId} did not advance for ${Math.round(stallMs / 1000)} s`);
    }
    await sleep(delay, signal);
    throwIfAborted(signal);
  }
  const readAt = new Date().toISOString();
  const stale = staleViews(applied, types, await deps.stateStore.loadViews(patientId, types), readAt);
  if (stale.length === 0) return;
  const full = await deps.stateStore.load(patientId);
  if (!full) return;
  // The format the state engine stores, so reads serve it.
  await deps.stateStore.saveViews(patientId, renderCachedViews(full, stale, readAt));
}

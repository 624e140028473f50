import type { ModuleKey } from "../readmodels/module.js";
import { MODULE_KEYS } from "../readmodels/registry.js";
import type { ViewType } from "../readmodels/views/index.js";
import type { PatientStore } from "../src/control/patients.js";
import type { PatientLog } from "../src/logs/patient-log.js";
import { applyInOrder, emptyStored, replayAll, type SequencedLogs } from "../src/state/apply-logs.js";
import { renderCachedViews } from "../src/state/view-cache.js";
import { changedModules, EVENTS_KEPT, type PatientStateStore, type StoredPatientState } from "../infra/redis/state-store.js";
import type { Mailbox } from "./mailbox.js";
import type { Delivery, DrainResult, LoadInput } from "./patient-actor.js";
import { batchNeedsReplay, loadPlan } from "./patient-decisions.js";

/** Rebuilds of one patient refused in a row before its actor fails (and its deliveries come again). */
const REPLAY_ATTEMPTS = 5;

/** What the engine counts of the fold's work. */
export interface FoldStats {
  applied_logs: number;
  replays: number;
}

/**
 * The patient actor's effects on storage: load a patient's state (or rebuild it from the
 * log), fold its mailbox onto it with fenced saves, render its views. The decisions are
 * pure (patient-decisions.ts); this is where they meet Redis and JetStream.
 */
export class PatientFold {
  constructor(
    private readonly deps: {
      store: PatientStateStore;
      patients: PatientStore;
      log: PatientLog;
      stats: FoldStats;
      /** Modules changed while the patient was passivated, whose views still need rendering. */
      unrendered: (patientId: string) => ModuleKey[];
      /** Whether the patient's next load must replay (its record's time zone changed). */
      replayNext: (patientId: string) => boolean;
    },
  ) {}

  private async history(s: Pick<StoredPatientState, "organization_id" | "project_id">, patientId: string): Promise<SequencedLogs[]> {
    const out: SequencedLogs[] = [];
    // A parked message reads as one without logs: the state has still applied up to it.
    for await (const m of this.deps.log.read({ organization_id: s.organization_id, project_id: s.project_id, patient_id: patientId })) out.push({ seq: m.seq, logs: m.data.logs });
    return out;
  }

  /**
   * The patient's whole history folded again and saved whole. The save is refused only
   * when Redis holds a state folded further (another member, briefly on the same
   * partition): the history read again then reaches it.
   */
  private async replay(base: StoredPatientState, now: string) {
    for (let attempt = 1; ; attempt++) {
      this.deps.stats.replays++;
      const r = replayAll(base, await this.history(base, base.state.patient_id), now);
      if (await this.deps.store.save(r.stored, r.events.slice(-EVENTS_KEPT))) return r;
      if (attempt === REPLAY_ATTEMPTS) throw new Error(`patient ${base.state.patient_id}: a newer state was saved elsewhere ${attempt} times during a rebuild`);
    }
  }

  async load(input: LoadInput, now: string): Promise<{ stored: StoredPatientState; changed: ModuleKey[] }> {
    const unrendered = this.deps.unrendered(input.patient_id);
    const plan = loadPlan(await this.deps.store.load(input.patient_id), { forced: this.deps.replayNext(input.patient_id), firstQueuedSeq: input.firstQueuedSeq });
    if (plan.kind === "use") return { stored: plan.stored, changed: unrendered };
    const record = await this.deps.patients.get(input.project_id, input.patient_id);
    const empty = emptyStored(input.patient_id, record?.timezone ?? "UTC", input.organization_id, input.project_id, record?.date_of_birth ?? null);
    // One direct get instead of reading the subject.
    if (plan.kind === "new-if-first" && (await this.deps.log.firstSeq(input)) === input.firstQueuedSeq) return { stored: empty, changed: [] };
    // Redis lost the state, a reducer changed, or the last actor failed: replay.
    const r = await this.replay(empty, now);
    this.deps.stats.applied_logs += r.events.length;
    return { stored: r.stored, changed: r.stored.applied_seq > 0 ? [...MODULE_KEYS] : [] };
  }

  /** Applies everything in the mailbox, again while it refills, then returns the state. */
  async drain(stored: StoredPatientState, mailbox: Mailbox, now: () => string): Promise<DrainResult> {
    let s = stored;
    const changed = new Set<ModuleKey>();
    while (mailbox.size() > 0) {
      const batch = mailbox.take();
      try {
        const r = await this.process(s, batch, now());
        s = r.stored;
        for (const k of r.changed) changed.add(k);
      } catch (err) {
        for (const d of batch) d.nak();
        throw err;
      }
    }
    return { stored: s, changed };
  }

  private async process(stored: StoredPatientState, batch: Delivery[], now: string) {
    const ordered = [...batch].sort((a, b) => a.seq - b.seq);
    let r = applyInOrder(stored, ordered, now);
    if (batchNeedsReplay(r, ordered)) r = await this.replay(stored, now);
    // A patient's first save writes its whole (new) state; later ones only what changed.
    else if (r.events.length > 0 && !(await this.deps.store.save(r.stored, r.events, stored.applied_seq === 0 ? undefined : changedModules(stored.state, r.stored.state), stored.applied_seq))) {
      // Redis lost the patient, or another member saved it past this actor's copy: the
      // whole history decides again.
      r = await this.replay(stored, now);
    }
    for (const d of batch) d.ack();
    this.deps.stats.applied_logs += r.events.length;
    return r;
  }

  async renderViews(stored: StoredPatientState, types: readonly ViewType[]): Promise<void> {
    // Stored with the sequence they reflect and the day their week ends: a read serves a
    // view only if it is current, and read on that day.
    await this.deps.store.saveViews(stored.state.patient_id, renderCachedViews(stored, types, new Date().toISOString()));
  }
}

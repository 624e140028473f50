import type { ModuleKey } from "../readmodels/module.js";
import { VIEW_INPUTS, viewsAffectedBy, type ViewType } from "../readmodels/views/index.js";
import { MODEL_FINGERPRINT, type PatientStateStore, type StoredPatientState } from "../infra/redis/state-store.js";
import { staleViews } from "../src/state/view-cache.js";
import type { IdleGate } from "./idle-gate.js";

/** Passivated patients remembered for a background render; about 100 bytes each. */
const MAX_UNRENDERED = 100_000;
/** Deferred renders in flight: each waits on one Redis load, so a few overlap those waits. */
const DEFERRED_RENDERS_AT_ONCE = 4;

/**
 * Patients passivated before their views were rendered (evicted under load, or idle while
 * the engine stayed busy), with the modules those views read. Rendered from Redis once the
 * engine has caught up (each waits in the idle gate, behind every delivery), so reads find
 * them current instead of rendering on demand; an actor started for one of them takes its
 * modules over (`take`).
 */
export class DeferredRenders {
  private readonly unrendered = new Map<string, Set<ModuleKey>>();
  private parked = false;
  private stopping = false;
  private readonly key = {};
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly deps: {
      idle: IdleGate;
      store: PatientStateStore;
      log: { warn(obj: unknown, msg?: string): void };
      /** Whether an actor holds the patient now (its render would race this one). */
      held: (patientId: string) => boolean;
      render: (stored: StoredPatientState, types: readonly ViewType[]) => Promise<void>;
    },
  ) {}

  /** Remembers a passivated patient's unrendered views (bounded: past it, reads render them). */
  defer(patientId: string, modules: readonly ModuleKey[]): void {
    if (this.stopping) return;
    const known = this.unrendered.get(patientId);
    if (known) for (const k of modules) known.add(k);
    else if (this.unrendered.size < MAX_UNRENDERED) this.unrendered.set(patientId, new Set(modules));
    this.park();
  }

  /** The modules whose views a passivated patient left unrendered, handed to its new actor. */
  take(patientId: string): ModuleKey[] {
    const modules = this.unrendered.get(patientId);
    if (!modules) return [];
    this.unrendered.delete(patientId);
    return [...modules];
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.unrendered.clear();
    this.deps.idle.unpark(this.key);
    await Promise.allSettled(this.running);
  }

  /** Waits in the idle gate (behind every delivery) to render one more deferred patient. */
  private park(): void {
    if (this.parked || this.stopping || this.unrendered.size === 0 || this.running.size >= DEFERRED_RENDERS_AT_ONCE) return;
    this.parked = true;
    this.deps.idle.park(this.key, () => {
      this.parked = false;
      const next = this.unrendered.keys().next();
      if (next.done) return;
      const patientId = next.value;
      const job = this.renderStored(patientId, this.take(patientId))
        .catch((err: unknown) => this.deps.log.warn({ err, patient_id: patientId }, "deferred view render failed; reads render on demand"))
        .finally(() => {
          this.running.delete(job);
          this.park();
        });
      this.running.add(job);
      this.park();
    });
  }

  /**
   * Renders a passivated patient's views from its state in Redis. Skipped when an actor
   * holds the patient again (its load normally takes the modules over; in the rare race
   * where it loaded first, a read renders what is stale): a render here would race it.
   */
  private async renderStored(patientId: string, modules: ModuleKey[]): Promise<void> {
    if (this.deps.held(patientId)) return;
    const types = viewsAffectedBy(modules);
    const store = this.deps.store;
    // The meta and the stored views first: a read or a job's view backfill has often
    // rendered them already, and then no module needs loading at all.
    const [head, cached] = await Promise.all([store.loadModules(patientId, []), store.loadViews(patientId, types)]);
    if (!head || head.fingerprint !== MODEL_FINGERPRINT || this.stopping || this.deps.held(patientId)) return;
    const stale = staleViews(head, types, cached, new Date().toISOString());
    if (stale.length === 0) return;
    // Only what those views read (as a read renders them), with the meta of that moment.
    const stored = await store.loadModules(patientId, [...new Set(stale.flatMap((t) => VIEW_INPUTS[t]))]);
    if (!stored || stored.fingerprint !== MODEL_FINGERPRINT || this.stopping || this.deps.held(patientId)) return;
    await this.deps.render(stored, stale);
  }
}

/**
 * Which patients hold one of the engine's places in memory (an actor each, at most `max`
 * of them), and which wait for one.
 *
 * A patient with deliveries and no actor waits, first come first started, while every
 * place is taken by an actor with work: each new actor loads from Redis, and thousands
 * loading at once queue their commands past Redis's time-out, fail, and are replayed.
 * The reader reads on meanwhile (within the in-flight budget), so the patients in memory
 * are not held up behind a new one, and a waiting patient's mailbox fills: it starts with
 * every log sent to it by then, one load and one save for all of them. Actors with nothing
 * to apply make the places: at once when someone waits, else when eviction takes them.
 */
export class PatientPlaces<Input extends { patient_id: string }> {
  /** Actors with nothing to apply, least recently become so first: what eviction takes, found without a scan. */
  private readonly evictable = new Set<string>();
  /** Insertion-ordered: the patient waiting longest starts first. */
  private readonly waiting = new Map<string, Input>();

  constructor(
    private readonly o: {
      max: number;
      /** Actors held now. */
      held: () => number;
      /** Starts a patient's actor (which calls `started`). */
      start: (input: Input) => void;
      /** Passivates the patient's actor, if it has one. */
      passivate: (patientId: string) => void;
    },
  ) {}

  /** A patient with deliveries and no actor: started now if a place allows, else queued. */
  wait(input: Input): void {
    if (this.waiting.has(input.patient_id)) return;
    this.waiting.set(input.patient_id, input);
    this.fill();
  }

  /** Its actor started (from the queue or otherwise: a touch): it no longer waits. */
  started(patientId: string): void {
    this.waiting.delete(patientId);
  }

  /** An actor's state changed: `idle` when it has nothing to apply. `passivate` stops this actor (not a later one of the patient). */
  update(patientId: string, idle: boolean, passivate: () => void): void {
    if (!idle) this.evictable.delete(patientId);
    else if (this.waiting.size > 0 || this.o.held() > this.o.max) queueMicrotask(passivate);
    else this.evictable.add(patientId);
  }

  /** Its actor stopped. */
  gone(patientId: string): void {
    this.evictable.delete(patientId);
  }

  /** Takes the waiting patients `drop` picks out of the queue (their partition went) and returns their ids. */
  drop(drop: (patientId: string) => boolean): string[] {
    const out = [...this.waiting.keys()].filter(drop);
    for (const pid of out) this.waiting.delete(pid);
    return out;
  }

  clear(): void {
    this.waiting.clear();
  }

  /** Before a start past `max` (a touch): makes room if idle actors can give it. */
  makeRoom(): void {
    if (this.o.held() >= this.o.max) this.evictIdle();
  }

  /** Starts waiting patients while places allow, the one waiting longest first; with none free, passivates idle actors once to make some. */
  fill(): void {
    for (let evicted = false; this.waiting.size > 0; ) {
      if (this.o.held() >= this.o.max) {
        if (evicted) return;
        // A passivated actor may be gone at once (xstate runs the event synchronously).
        this.evictIdle();
        evicted = true;
        continue;
      }
      const next = this.waiting.values().next().value!;
      this.waiting.delete(next.patient_id);
      this.o.start(next);
    }
  }

  /**
   * Passivates a tenth of the actors with nothing to apply (idle, or only waiting to
   * render views, rendered later from Redis), those idle longest first. When every actor
   * is busy none goes: the patients wait, and the in-flight budget bounds what is held.
   */
  private evictIdle(): void {
    let n = Math.max(1, Math.floor(this.o.max / 10));
    for (const pid of [...this.evictable]) {
      if (n-- <= 0) break;
      this.evictable.delete(pid);
      this.o.passivate(pid);
    }
  }
}

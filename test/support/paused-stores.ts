import { PatientStateStore, type StoredPatientState } from "../../infra/redis/state-store.js";

// State stores standing for a member paused mid-work (a long GC, a stopped VM): the same
// keys in the real Redis, reached late.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A seeded generator (mulberry32): a failing round can be run again as it was. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** How often (0 to 1) a member stalls, and for how long (ms). */
export type Pause = [chance: number, ms: number];
export interface Pauses {
  load: Pause;
  save: Pause;
}
export const NO_PAUSES: Pauses = { load: [0, 0], save: [0, 0] };

/**
 * A store on the same keys whose loads and saves now and then stall, as a member paused
 * there (a long GC, a stopped VM) would; it counts the saves the fences refused.
 */
export class StallingStore extends PatientStateStore {
  stalls = 0;
  refused = 0;
  constructor(
    ...[redis, prefix, rnd, pauses]: [...ConstructorParameters<typeof PatientStateStore>, () => number, Pauses]
  ) {
    super(redis, prefix);
    this.rnd = rnd;
    this.pauses = pauses;
  }
  private readonly rnd: () => number;
  private readonly pauses: Pauses;
  private async stall([chance, ms]: Pause): Promise<void> {
    if (this.rnd() >= chance) return;
    this.stalls++;
    await sleep(ms);
  }
  override async load(patientId: string): Promise<StoredPatientState | null> {
    await this.stall(this.pauses.load);
    return super.load(patientId);
  }
  override async save(...args: Parameters<PatientStateStore["save"]>): Promise<boolean> {
    await this.stall(this.pauses.save);
    const ok = await super.save(...args);
    if (!ok) this.refused++;
    return ok;
  }
}

/** A store on the same keys whose loads and saves of chosen patients wait until let go: a member paused at that point. */
export class GatedStore extends PatientStateStore {
  refused = 0;
  private readonly gates = new Map<string, { wait: Promise<void>; open: () => void }>();
  hold(what: "load" | "save", pid: string): void {
    let open!: () => void;
    const wait = new Promise<void>((r) => (open = r));
    this.gates.set(`${what}:${pid}`, { wait, open });
  }
  release(what: "load" | "save", pid: string): void {
    this.gates.get(`${what}:${pid}`)?.open();
    this.gates.delete(`${what}:${pid}`);
  }
  override async load(patientId: string): Promise<StoredPatientState | null> {
    await this.gates.get(`load:${patientId}`)?.wait;
    return super.load(patientId);
  }
  override async save(...args: Parameters<PatientStateStore["save"]>): Promise<boolean> {
    await this.gates.get(`save:${args[0].state.patient_id}`)?.wait;
    const ok = await super.save(...args);
    if (!ok) this.refused++;
    return ok;
  }
}

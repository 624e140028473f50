import { setFlagsFromString } from "node:v8";

/** Caps held in this process: the flag is process-wide, so the first hold sets it and the last release clears it. */
let holders = 0;

/**
 * A tighter bound on V8's heap growth while memory-heavy batch work runs (ingestion jobs).
 *
 * After each full collection V8 lets the old generation grow to what is live times a
 * factor it derives from allocation and collection speeds, up to 4 with Node's default
 * heap limit on a machine with this much RAM. A job's replay promotes in-flight work at
 * about 70 MB/s, so between full collections the old space reached two to three times its
 * live size, and the job's peak RSS passed 1 GB. `--heap-growing-percent` fixes the
 * factor instead (1 + percent / 100). V8 reads it each time it sets the next limit, so it
 * can change while the process runs and takes effect from the next full collection.
 *
 * It is a process-wide setting: live traffic served during a job pays the extra full
 * collections too (about a tenth of its throughput at saturation, measured with the
 * equivalent `--max-old-space-size=1536`), and only then. An operator who set the flag
 * when starting Node keeps it: `setByOperator` tells, and the service then makes no cap.
 */
export class HeapGrowthCap {
  private holding = false;

  constructor(
    /** 0 turns the cap off. */
    private readonly percent: number,
    private readonly setFlags: (flags: string) => void = setFlagsFromString,
  ) {}

  /** True when Node was started with its own `--heap-growing-percent`. */
  static setByOperator(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ""): boolean {
    return [...execArgv, nodeOptions].some((a) => /--heap[-_]growing[-_]percent/.test(a));
  }

  /** Caps the growth while `active`; calls that change nothing cost nothing. */
  set(active: boolean): void {
    const want = active && this.percent > 0;
    if (want === this.holding) return;
    this.holding = want;
    holders += want ? 1 : -1;
    // 0 is V8's default: the dynamic factor.
    if (want && holders === 1) this.setFlags(`--heap-growing-percent=${this.percent}`);
    if (!want && holders === 0) this.setFlags("--heap-growing-percent=0");
  }

  /** Whether this cap holds the flag now. */
  get active(): boolean {
    return this.holding;
  }
}

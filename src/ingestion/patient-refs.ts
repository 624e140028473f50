import { hash } from "node:crypto";
import type { PatientStore } from "../control/patients.js";
import { splitRef, type ExistingPatients, type Holder, type Resolved } from "./file-rules.js";

const SERVICE_ID = /^pat_[0-9A-Za-z]{6,60}$/;
const NONE: readonly Holder[] = [];
/** Patient records read at once while the value index is built. */
const SCAN_AT_ONCE = 64;

interface ValueIndex {
  found: Map<string, Resolved>;
  holders: Map<string, Holder[]>;
}

/**
 * Resolves log references the file does not declare against the project's existing
 * patients: a service id, `system|value`, or a bare identifier value. Answers are cached
 * per reference (a file names the same patient many times); the value-only index, which
 * needs a scan of the project's patients, is built once and only if a bare value needs it.
 */
export class ExistingPatientResolver implements ExistingPatients {
  private readonly known = new Map<string, Resolved>();
  private readonly pending = new Map<string, Promise<Resolved>>();
  private byValue: Promise<ValueIndex> | null = null;
  private built: ValueIndex | null = null;

  constructor(
    private readonly patients: PatientStore,
    private readonly projectId: string,
  ) {}

  resolve(ref: string): Resolved | Promise<Resolved> {
    const hit = this.known.get(ref);
    if (hit !== undefined) return hit;
    let p = this.pending.get(ref);
    if (!p) {
      p = this.lookup(ref).then((f) => {
        this.known.set(ref, f);
        this.pending.delete(ref);
        return f;
      });
      this.pending.set(ref, p);
    }
    return p;
  }

  private async lookup(ref: string): Promise<Resolved> {
    if (SERVICE_ID.test(ref)) {
      const p = await this.patients.getActive(this.projectId, ref);
      if (p) return p.id;
    }
    const pair = splitRef(ref);
    if (pair) {
      const p = await this.patients.findByExternalId(this.projectId, pair);
      if (p) return p.id;
    }
    return (await this.valueIndex()).found.get(ref) ?? null;
  }

  /** Synchronous once the index is built: a file's every log line may ask. */
  holdersOf(value: string): readonly Holder[] | Promise<readonly Holder[]> {
    if (this.built) return this.built.holders.get(value) ?? NONE;
    return this.valueIndex().then((index) => index.holders.get(value) ?? NONE);
  }

  /**
   * Every identifier value of the project's active patients, by value: a scan, made once
   * per job and only when a bare value needs it. Records are read a few dozen at a time and
   * past the patient cache, which the write path relies on.
   */
  private valueIndex(): Promise<ValueIndex> {
    this.byValue ??= (async () => {
      const found = new Map<string, Resolved>();
      const holders = new Map<string, Holder[]>();
      const ids = await this.patients.list(this.projectId);
      for (let i = 0; i < ids.length; i += SCAN_AT_ONCE) {
        const batch = await Promise.all(ids.slice(i, i + SCAN_AT_ONCE).map((id) => this.patients.peek(this.projectId, id)));
        for (const p of batch) {
          if (!p || p.status !== "active") continue;
          for (const e of p.external_identifiers) {
            const seen = found.get(e.value);
            found.set(e.value, seen === undefined || seen === p.id ? p.id : "ambiguous");
            const list = holders.get(e.value);
            if (list) list.push({ system: e.system, patient_id: p.id });
            else holders.set(e.value, [{ system: e.system, patient_id: p.id }]);
          }
        }
      }
      this.built = { found, holders };
      return this.built;
    })();
    return this.byValue;
  }
}

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * The id a job gives the patient of one file line: derived from the job and the line,
 * so a stage re-run after a restart finds the patients it already created (and a
 * rollback can name them) instead of creating them twice. Shaped like other patient ids
 * (`pat_` + 26 Crockford characters), time part from the job's own ULID.
 */
export function derivedPatientId(jobId: string, line: number): string {
  const time = jobId.slice(4, 14);
  const h = hash("sha256", `${jobId}:${line}`, "buffer");
  let rand = "";
  for (let i = 0; i < 16; i++) rand += CROCKFORD[h[i]! & 31];
  return `pat_${time}${rand}`;
}

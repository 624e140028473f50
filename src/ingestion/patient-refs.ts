import { hash } from "node:crypto";
import type { PatientStore } from "../control/patients.js";
import { splitRef, type ExistingPatients } from "./file-rules.js";

type Found = string | "ambiguous" | null;

const SERVICE_ID = /^pat_[0-9A-Za-z]{6,60}$/;
const NONE: readonly string[] = [];

/**
 * Resolves log references the file does not declare against the project's existing
 * patients: a service id, `system|value`, or a bare identifier value. Answers are cached
 * per reference (a file names the same patient many times); the value-only index, which
 * needs a scan of the project's patients, is built once and only if a bare value needs it.
 */
export class ExistingPatientResolver implements ExistingPatients {
  private readonly known = new Map<string, Found>();
  private readonly pending = new Map<string, Promise<Found>>();
  private byValue: Promise<{ found: Map<string, Found>; systems: Map<string, string[]> }> | null = null;
  private built: { found: Map<string, Found>; systems: Map<string, string[]> } | null = null;

  constructor(
    private readonly patients: PatientStore,
    private readonly projectId: string,
  ) {}

  resolve(ref: string): Found | Promise<Found> {
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

  private async lookup(ref: string): Promise<Found> {
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
  systemsOf(value: string): readonly string[] | Promise<readonly string[]> {
    if (this.built) return this.built.systems.get(value) ?? NONE;
    return this.valueIndex().then((index) => index.systems.get(value) ?? NONE);
  }

  private valueIndex(): Promise<{ found: Map<string, Found>; systems: Map<string, string[]> }> {
    this.byValue ??= (async () => {
      const found = new Map<string, Found>();
      const systems = new Map<string, string[]>();
      for (const id of await this.patients.list(this.projectId)) {
        const p = await this.patients.getActive(this.projectId, id);
        for (const e of p?.external_identifiers ?? []) {
          const seen = found.get(e.value);
          found.set(e.value, seen === undefined || seen === p!.id ? p!.id : "ambiguous");
          const list = systems.get(e.value);
          if (list) list.push(e.system);
          else systems.set(e.value, [e.system]);
        }
      }
      this.built = { found, systems };
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

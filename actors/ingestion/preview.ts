import { stateAt } from "../../readmodels/as-of.js";
import type { LogRecord } from "../../readmodels/log-record.js";
import { diffStates, type ModuleDiff } from "../../readmodels/state-diff.js";
import type { Principal } from "../../src/auth/scopes.js";
import { AppError, isAppError } from "../../src/errors.js";
import type { JobRecord } from "../../src/ingestion/job-record.js";
import { bucketOf, readBucket, type StagedLine, type StagingDeps } from "../../src/ingestion/staging.js";
import { validateEnvelope } from "../../src/logs/envelope.js";
import { toRecord } from "../../src/logs/log-writer.js";
import type { HorizonReader } from "../../src/state/as-of-read.js";
import { conflict } from "./job-control.js";
import { stagedLogs } from "./replay-writes.js";

/** Patients a preview shows when the caller names no limit. */
export const PREVIEW_DEFAULT_PATIENTS = 5;
/** Most patients one preview folds: each costs its whole history read and folded twice. */
export const PREVIEW_MAX_PATIENTS = 20;

/**
 * A staged log has no id until the replay stores it; in a preview it is named by its line.
 * Padded, so staged logs of one time sort by line, and after every stored log ("log_…"),
 * as the replay's new ids will.
 */
export const stagedLogId = (line: number): string => `staged_line_${String(line).padStart(10, "0")}`;

export interface PatientPreview {
  patient_id: string;
  name: string | null;
  /** Lines of the job staged for the patient. */
  logs_staged: number;
  /** Staged logs the replay would pass by: their idempotency_key is already stored, or (a repeat in the file) staged before. */
  logs_duplicate: number;
  /** The patient's log lines skipped at validation for their payload, and staged logs the write path would now refuse. */
  logs_invalid: number;
  modules: ModuleDiff[];
}

export interface JobPreview {
  job_id: string;
  /** Patients with staged logs in the job (those the job's per-patient counts name). */
  patients_total: number;
  patients: PatientPreview[];
}

/**
 * What confirming a job awaiting confirmation would change, for a sample of its patients
 * (GET /v1/ingestion/jobs/{id}/preview). Each patient's staged lines are read from the
 * staging bucket and made into logs by the replay's own code (replay-writes.ts stagedLogs,
 * then the write path's validateEnvelope and toRecord); its stored history is folded
 * without and with them, and the two states diffed as GET /v1/state/{pid}/diff does.
 * Nothing is written: the records exist only in memory.
 */
export class JobPreviewer {
  constructor(private readonly deps: { staging: StagingDeps; horizon: HorizonReader; now?: () => string }) {}

  async preview(principal: Principal, r: JobRecord, o: { patient_id?: string; limit: number }): Promise<JobPreview> {
    if (r.status !== "awaiting_confirmation") throw conflict(r, "a preview shows what confirming would change, so only a job awaiting confirmation has one");
    const removed = new Set(r.removed_patients);
    const listed = Object.keys(r.patient_log_counts).filter((p) => !removed.has(p));
    const sample = o.patient_id !== undefined ? [o.patient_id] : listed.slice(0, Math.min(o.limit, PREVIEW_MAX_PATIENTS));
    const lines = await this.stagedLines(r, sample);
    const invalidOnly = o.patient_id !== undefined && (r.patient_invalid_counts[o.patient_id] ?? 0) > 0;
    if (o.patient_id !== undefined && (removed.has(o.patient_id) || (!lines.has(o.patient_id) && !listed.includes(o.patient_id) && !invalidOnly))) {
      throw new AppError("not_found", `patient ${o.patient_id} is not part of ingestion job ${r.job_id}: none of its staged logs names it`);
    }
    const patients: PatientPreview[] = [];
    for (const pid of sample) {
      const p = await this.patient(principal, r, pid, lines.get(pid) ?? []).catch((err: unknown) => {
        // A sampled patient deleted since it was staged has nothing to preview; one named is the caller's 404.
        if (o.patient_id === undefined && isAppError(err) && err.code === "not_found") return null;
        throw err;
      });
      if (p) patients.push(p);
    }
    return { job_id: r.job_id, patients_total: listed.length, patients };
  }

  /** The sample's staged lines, each bucket read once; a line staged twice (a rewrite under way) counts once. */
  private async stagedLines(r: JobRecord, sample: readonly string[]): Promise<Map<string, StagedLine[]>> {
    const wanted = new Set(sample);
    const buckets = new Set(sample.map((pid) => bucketOf(pid, Math.max(1, r.replay_buckets))));
    const out = new Map<string, StagedLine[]>();
    const seen = new Set<number>();
    for (const bucket of buckets) {
      for await (const part of readBucket(this.deps.staging, r.job_id, bucket)) {
        for (const e of part) {
          if (!wanted.has(e.patient) || seen.has(e.line)) continue;
          seen.add(e.line);
          const list = out.get(e.patient);
          if (list) list.push(e);
          else out.set(e.patient, [e]);
        }
      }
    }
    return out;
  }

  private async patient(principal: Principal, r: JobRecord, pid: string, lines: StagedLine[]): Promise<PatientPreview> {
    const { patient, base, logs } = await this.deps.horizon.history(principal, pid);
    const storedKeys = new Set(logs.flatMap((l) => (l.idempotency_key !== undefined ? [l.idempotency_key] : [])));
    const ingestedAt = this.deps.now?.() ?? new Date().toISOString();
    const scope = { organization_id: r.organization_id, project_id: r.project_id };
    const pending = stagedLogs(lines, pid, r.job_id);
    const added: LogRecord[] = [];
    // Lines VALIDATING skipped for their payload were never staged: counted from the record.
    let invalid = r.patient_invalid_counts[pid] ?? 0;
    let duplicate = lines.length - pending.length;
    for (const p of pending) {
      const v = validateEnvelope(p.log, ["line", p.line], ingestedAt);
      if (!v.ok) invalid++;
      else if (v.log.idempotency_key !== undefined && storedKeys.has(v.log.idempotency_key)) duplicate++;
      else added.push({ ...toRecord(v.log, scope, ingestedAt, v.log.idempotency_key), id: stagedLogId(p.line) });
    }
    // Folded twice rather than once with a known_at between: a log stored in the same
    // millisecond as the staged ones' acceptance time would fall on the wrong side.
    const before = stateAt(base.state, logs, {});
    const after = stateAt(base.state, [...logs, ...added], {});
    const name = [patient.first_name, patient.last_name].filter((x) => x).join(" ") || null;
    return { patient_id: pid, name, logs_staged: lines.length, logs_duplicate: duplicate, logs_invalid: invalid, modules: diffStates(before, after) };
  }
}

import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import type { JetStreamPublisher } from "../../infra/nats/jetstream-publisher.js";
import type { PublishedMessages } from "../../infra/nats/published-messages.js";
import type { TopologyNames } from "../../infra/nats/topology.js";
import type { LogRecord } from "../../readmodels/log-record.js";
import type { LogOutcomes, LogSource } from "../../infra/metrics/process-metrics.js";
import type { PatientStore } from "../control/patients.js";
import { AppError, type ErrorDetail, fieldIssue } from "../errors.js";
import { newId } from "../ids.js";
import { validateEnvelope, type ValidLogInput } from "./envelope.js";
import type { IdempotencyLedger } from "./idempotency-ledger.js";
import { KeyClaims, type KeyClaim, type Pending, type Valid } from "./key-claims.js";

export interface WriteScope {
  organization_id: string;
  project_id: string;
  /** A patient token writes only for its patient; any other patient is "not found". */
  only_patient_id?: string;
}

export type LogStatus = "accepted" | "duplicate" | "failed";

export interface BatchAnswer {
  accepted: number;
  failed: number;
  duplicates: number;
  errors: { index: number; code: string; message: string; details: ErrorDetail[] }[];
  results: { index: number; id: string | null; status: LogStatus }[];
}

/** What one patient's part of a batch looks like on the wire: one JetStream message. */
export interface PatientLogMessage {
  logs: LogRecord[];
}

const DAY_MS = 86_400_000;

/** `{"logs":[` and `]}` around a message's records. */
const MESSAGE_WRAPPER_BYTES = 11;

/** A validated log as stored: its id (a ULID, so acceptance order), tenancy and acceptance time. */
export function toRecord(log: ValidLogInput, scope: WriteScope, ingestedAt: string, key: string | undefined): LogRecord {
  const record: LogRecord = {
    id: newId("log"),
    log_type: log.log_type,
    organization_id: scope.organization_id,
    project_id: scope.project_id,
    patient_id: log.patient_id,
    timestamp: log.timestamp,
    ingested_at: ingestedAt,
    payload: log.payload,
  };
  if (key !== undefined) record.idempotency_key = key;
  if (log.trace !== undefined) record.trace = log.trace;
  if (log.metadata !== undefined) record.metadata = log.metadata;
  return record;
}

/**
 * The write path of POST /v1/logs/batch (and of device feeds): validate each log, claim
 * idempotency keys, then store each patient's logs of the batch as one JetStream
 * message on that patient's subject. Returns only after JetStream acknowledged every
 * stored log, so an accepted log is never lost.
 */
export class LogWriter {
  private readonly encoder = new TextEncoder();
  private readonly claims: KeyClaims;

  constructor(
    private readonly deps: {
      publisher: JetStreamPublisher;
      names: TopologyNames;
      js: JetStreamClient;
      jsm: JetStreamManager;
      patients: PatientStore;
      ledger: IdempotencyLedger;
      /**
       * Clients' log ids (the SDK's `log_id`), claimed per project and acceptance day: a
       * log sent without an idempotency key whose id was claimed that day or the day
       * before is a duplicate. The SDK re-sends a batch it timed out on with the same ids.
       */
      logIds: IdempotencyLedger;
      /** Largest JetStream message the server takes (its max_payload), in bytes. */
      maxMessageBytes: number;
      /** How long a claim may be in flight before a duplicate checks the history: publish time-out plus margin. */
      claimLeaseMs: number;
      /** Told, before the answer goes out, the highest stream sequence stored per patient (read-your-writes). */
      accepted?: { raiseAccepted(projectId: string, entries: { patient_id: string; seq: number }[]): Promise<void> };
      /** This process's readers of the log stream, handed each stored message as the object it was serialized from. */
      published?: PublishedMessages<PatientLogMessage>;
      /** The acceptance time of a batch, in epoch ms. @default Date.now */
      clock?: () => number;
      /** Told how many logs of each write were stored and refused (metrics). */
      outcomes?: LogOutcomes;
    },
  ) {
    this.claims = new KeyClaims(deps);
  }

  /**
   * `at` locates each log in the caller's input for error paths: a prefix to which the
   * log's index is added (`["logs"]` gives `logs.3.payload…`), or a function from the
   * index to the whole location (a job's replay names the file line).
   */
  async writeBatch(
    scope: WriteScope,
    raw: unknown[],
    opts: {
      /** Where the logs come in (counted per source): POST /v1/logs/batch, a device feed, an ingestion job. */
      source: LogSource;
      atomic: boolean;
      at: (string | number)[] | ((index: number) => (string | number)[]);
      /**
       * A key for a log sent without one (a device feed's `ingest:<seq>:<index>`), so a
       * redelivery is a duplicate. It is claimed in a namespace of its own: a client's key
       * that happens to read the same never makes a feed log a duplicate, nor the reverse.
       */
      generatedKey?: (index: number) => string;
      /**
       * Claims the logs' own keys in a space of their own (no client key holds NUL): a FHIR
       * resource's key K keys its logs `K:n`, and a log of POST /v1/logs/batch that
       * happens to be keyed `K:0` must neither be taken for one of them nor hide one.
       */
      keySpace?: string;
    },
  ): Promise<BatchAnswer> {
    const at = opts.at;
    const pathOf = typeof at === "function" ? at : (i: number) => [...at, i];
    const answer: BatchAnswer = { accepted: 0, failed: 0, duplicates: 0, errors: [], results: new Array<BatchAnswer["results"][number]>(raw.length) };
    const valid: Valid[] = [];
    const fail = (index: number, code: string, message: string, details: ErrorDetail[]) => {
      answer.errors.push({ index, code, message, details });
      answer.results[index] = { index, id: null, status: "failed" };
      answer.failed++;
    };

    const acceptedAt = this.deps.clock?.() ?? Date.now();
    const ingestedAt = new Date(acceptedAt).toISOString();
    const day = Math.floor(acceptedAt / DAY_MS);
    for (let i = 0; i < raw.length; i++) {
      const r = validateEnvelope(raw[i], pathOf(i), ingestedAt);
      if (!r.ok) {
        fail(i, r.code, r.message, r.details);
        continue;
      }
      // Each record is serialized once, here: its size is known before anything is claimed
      // or stored (a log JetStream would refuse is the client's to fix, never a retryable
      // storage error, and an atomic batch stays whole), and messagesOf joins these texts.
      const { idempotency_key, client_log_id } = r.log;
      const generated = idempotency_key === undefined && client_log_id === undefined ? opts.generatedKey?.(i) : undefined;
      const record = toRecord(r.log, scope, ingestedAt, idempotency_key ?? generated);
      const text = JSON.stringify(record);
      const claim = this.claims.claimOf(scope, day, idempotency_key, client_log_id, generated, opts.keySpace);
      if (this.fits(text)) valid.push({ index: i, log: r.log, record, text, claim });
      else {
        const message = `log is too large to store: at most ${this.deps.maxMessageBytes - MESSAGE_WRAPPER_BYTES} bytes as stored JSON`;
        fail(i, "validation_error", message, [{ ...fieldIssue([...pathOf(i), "payload"], message), type: "payload_too_large" }]);
      }
    }
    await this.checkPatients(scope, valid, pathOf, fail);
    if (opts.atomic && answer.errors.length > 0) {
      this.count(opts.source, answer);
      throw new AppError("validation", `${answer.errors.length} of ${raw.length} logs are invalid; nothing was written (atomic)`, answer.errors.flatMap((e) => e.details));
    }
    const { toStore, twins, conflicts, claimedAt } = await this.claims.claimKeys(scope, valid, answer, day);
    for (const { index, field } of conflicts) {
      const msg = `${field} is already held by a log of another patient: it names one log of the project, so this one would never be stored; send it with ${field === "log_id" ? "a log_id" : "an idempotency_key"} of its own`;
      fail(index, "idempotency_conflict", msg, [{ ...fieldIssue([...pathOf(index), field], msg), type: "idempotency_conflict" }]);
    }
    await this.store(scope, toStore, answer, claimedAt);
    this.answerTwins(twins, answer);
    this.count(opts.source, answer);
    answer.results = answer.results.filter(Boolean);
    answer.results.sort((a, b) => a.index - b.index);
    answer.errors.sort((a, b) => a.index - b.index);
    return answer;
  }

  private async checkPatients(
    scope: WriteScope,
    valid: { index: number; log: ValidLogInput }[],
    pathOf: (index: number) => (string | number)[],
    fail: (index: number, code: string, message: string, details: ErrorDetail[]) => void,
  ): Promise<void> {
    const ids = [...new Set(valid.map((v) => v.log.patient_id))];
    const found = new Set<string>();
    const misses: string[] = [];
    for (const id of ids) {
      if (scope.only_patient_id !== undefined && id !== scope.only_patient_id) continue;
      // Known patients are answered from the cache in this tick; only misses wait on NATS.
      const cached = this.deps.patients.cachedActive(scope.project_id, id);
      if (cached) found.add(id);
      else if (cached === undefined) misses.push(id);
    }
    if (misses.length > 0) {
      await Promise.all(
        misses.map(async (id) => {
          if (await this.deps.patients.getActive(scope.project_id, id)) found.add(id);
        }),
      );
    }
    for (let i = valid.length - 1; i >= 0; i--) {
      const { index, log } = valid[i]!;
      if (found.has(log.patient_id)) continue;
      const msg = `patient ${log.patient_id} not found`;
      fail(index, "patient_not_found", msg, [{ ...fieldIssue([...pathOf(index), "patient_id"], msg, log.patient_id), type: "patient_not_found" }]);
      valid.splice(i, 1);
    }
  }

  /** Counts a write's stored and refused logs; a duplicate is neither. */
  private count(source: LogSource, answer: BatchAnswer): void {
    const outcomes = this.deps.outcomes;
    if (!outcomes) return;
    outcomes.accepted(source, answer.accepted);
    const byCode = new Map<string, number>();
    for (const e of answer.errors) byCode.set(e.code, (byCode.get(e.code) ?? 0) + 1);
    for (const [code, n] of byCode) outcomes.rejected(source, code, n);
  }

  /** Whether a record's text, alone in a message, stays under the server's limit (UTF-8 takes at most 3 bytes a UTF-16 unit). */
  private fits(text: string): boolean {
    const room = this.deps.maxMessageBytes - MESSAGE_WRAPPER_BYTES;
    return text.length * 3 <= room || Buffer.byteLength(text) <= room;
  }

  /**
   * A key repeated within the batch answers what its first log came to: the id it was
   * stored under, or the id already holding the key, or the first one's failure.
   */
  private answerTwins(twins: { index: number; first: number }[], answer: BatchAnswer): void {
    for (const { index, first } of twins) {
      const r = answer.results[first]!;
      if (r.status === "failed") {
        const e = answer.errors.find((x) => x.index === first)!;
        answer.errors.push({ ...e, index });
        answer.results[index] = { index, id: null, status: "failed" };
        answer.failed++;
      } else {
        answer.results[index] = { index, id: r.id, status: "duplicate" };
        answer.duplicates++;
      }
    }
  }

  /** Splits one patient's logs into messages under the server's payload limit. */
  private messagesOf(group: Pending[]): { data: Uint8Array; message: PatientLogMessage; logs: Pending[] }[] {
    const message: PatientLogMessage = { logs: group.map((g) => g.log) };
    // JSON.stringify(message), from the texts made at validation.
    let json = '{"logs":[';
    for (let i = 0; i < group.length; i++) json += i === 0 ? group[i]!.text : `,${group[i]!.text}`;
    const whole = this.encoder.encode(`${json}]}`);
    if (whole.length <= this.deps.maxMessageBytes || group.length === 1) return [{ data: whole, message, logs: group }];
    const half = Math.ceil(group.length / 2);
    return [...this.messagesOf(group.slice(0, half)), ...this.messagesOf(group.slice(half))];
  }

  private async store(scope: WriteScope, toStore: Pending[], answer: BatchAnswer, claimedAt: number): Promise<void> {
    const byPatient = new Map<string, Pending[]>();
    for (const p of toStore) {
      const list = byPatient.get(p.log.patient_id);
      if (list) list.push(p);
      else byPatient.set(p.log.patient_id, [p]);
    }
    const stored: string[] = [];
    const released: { claim: KeyClaim; logId: string }[] = [];
    const highest = new Map<string, number>();
    await Promise.all(
      [...byPatient].flatMap(([patientId, group]) => {
        const subject = this.deps.names.logSubject(scope.organization_id, scope.project_id, patientId);
        return this.messagesOf(group).map(async ({ data, message, logs }) => {
          try {
            const ack = await this.deps.publisher.publish(subject, data);
            // Before anything else awaits: the engine may be handed the delivery in the next ticks.
            if (!ack.duplicate) this.deps.published?.put(ack.seq, message, data.length);
            highest.set(patientId, Math.max(ack.seq, highest.get(patientId) ?? 0));
            for (const g of logs) {
              answer.results[g.index] = { index: g.index, id: g.log.id, status: "accepted" };
              answer.accepted++;
              if (g.claim) stored.push(g.log.id);
            }
          } catch (err) {
            for (const g of logs) {
              const message = `log could not be stored: ${(err as Error).message}; retry it`;
              answer.errors.push({ index: g.index, code: "storage_error", message, details: [{ type: "storage_error", message }] });
              answer.results[g.index] = { index: g.index, id: null, status: "failed" };
              answer.failed++;
              if (g.claim) released.push({ claim: g.claim, logId: g.log.id });
            }
          }
        });
      }),
    );
    if (this.deps.accepted && highest.size > 0) {
      // Without it a read right after this answer could miss the batch; the logs are stored either way.
      await this.deps.accepted
        .raiseAccepted(scope.project_id, [...highest].map(([patient_id, seq]) => ({ patient_id, seq })))
        .catch(() => undefined);
    }
    // Not awaited: a retry racing this mark waits for it (see retakeIfOrphan).
    void this.claims.markStored(stored, claimedAt).catch(() => undefined);
    await Promise.all(released.map(({ claim, logId }) => this.claims.release(claim, logId).catch(() => false)));
  }
}

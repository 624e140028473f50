import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import type { JetStreamPublisher } from "../../infra/nats/jetstream-publisher.js";
import type { PublishedMessages } from "../../infra/nats/published-messages.js";
import { readSubject } from "../../infra/nats/log-history.js";
import type { TopologyNames } from "../../infra/nats/topology.js";
import type { LogRecord } from "../../readmodels/log-record.js";
import type { PatientStore } from "../control/patients.js";
import { AppError, type ErrorDetail, fieldIssue } from "../errors.js";
import { newId } from "../ids.js";
import { validateEnvelope, type ValidLogInput } from "./envelope.js";
import type { Claim, IdempotencyLedger } from "./idempotency-ledger.js";

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

/** A log that passed validation, as it will be stored, and its JSON text. */
interface Valid {
  index: number;
  log: ValidLogInput;
  record: LogRecord;
  text: string;
  /** What its key is claimed as in the ledger: the client's key, or a generated one in its own namespace. */
  claimAs: string | undefined;
}

interface Pending {
  index: number;
  log: LogRecord;
  /** JSON.stringify(log), made once when the log was validated. */
  text: string;
  /** Digest of the idempotency key, when the log has one. */
  key?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Prefix of generated keys in the ledger: no client key starts with NUL (the envelope refuses it). */
const GENERATED_KEY_SPACE = "\u0000generated:";

/** Patients' stored log ids read during one batch's claims, with when each read began. */
type Histories = Map<string, { readAt: number; ids: Promise<Set<string>> }>;

/** `{"logs":[` and `]}` around a message's records. */
const MESSAGE_WRAPPER_BYTES = 11;

/** A validated log as stored: its id (a ULID, so acceptance order), tenancy and acceptance time. */
function toRecord(log: ValidLogInput, scope: WriteScope, ingestedAt: string, key: string | undefined): LogRecord {
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
  /** When a batch claimed its keys: where its "stored" marks go. */
  private readonly claimedAt = new WeakMap<BatchAnswer, number>();

  constructor(
    private readonly deps: {
      publisher: JetStreamPublisher;
      names: TopologyNames;
      js: JetStreamClient;
      jsm: JetStreamManager;
      patients: PatientStore;
      ledger: IdempotencyLedger;
      /** Largest JetStream message the server takes (its max_payload), in bytes. */
      maxMessageBytes: number;
      /** How long a claim may be in flight before a duplicate checks the history: publish time-out plus margin. */
      claimLeaseMs: number;
      /** Told, before the answer goes out, the highest stream sequence stored per patient (read-your-writes). */
      accepted?: { raiseAccepted(projectId: string, entries: { patient_id: string; seq: number }[]): Promise<void> };
      /** This process's readers of the log stream, handed each stored message as the object it was serialized from. */
      published?: PublishedMessages<PatientLogMessage>;
    },
  ) {}

  /**
   * `at` locates each log in the caller's input for error paths: a prefix to which the
   * log's index is added (`["logs"]` gives `logs.3.payload…`), or a function from the
   * index to the whole location (a job's replay names the file line).
   */
  async writeBatch(
    scope: WriteScope,
    raw: unknown[],
    opts: {
      atomic: boolean;
      at: (string | number)[] | ((index: number) => (string | number)[]);
      /**
       * A key for a log sent without one (a device feed's `ingest:<seq>:<index>`), so a
       * redelivery is a duplicate. It is claimed in a namespace of its own: a client's key
       * that happens to read the same never makes a feed log a duplicate, nor the reverse.
       */
      generatedKey?: (index: number) => string;
    },
  ): Promise<BatchAnswer> {
    const at = opts.at;
    const pathOf = typeof at === "function" ? at : (i: number) => [...at, i];
    const answer: BatchAnswer = { accepted: 0, failed: 0, duplicates: 0, errors: [], results: new Array(raw.length) };
    const valid: Valid[] = [];
    const fail = (index: number, code: string, message: string, details: ErrorDetail[]) => {
      answer.errors.push({ index, code, message, details });
      answer.results[index] = { index, id: null, status: "failed" };
      answer.failed++;
    };

    const ingestedAt = new Date().toISOString();
    for (let i = 0; i < raw.length; i++) {
      const r = validateEnvelope(raw[i], pathOf(i));
      if (!r.ok) {
        fail(i, r.code, r.message, r.details);
        continue;
      }
      // Each record is serialized once, here: its size is known before anything is claimed
      // or stored (a log JetStream would refuse is the client's to fix, never a retryable
      // storage error, and an atomic batch stays whole), and messagesOf joins these texts.
      const generated = r.log.idempotency_key === undefined ? opts.generatedKey?.(i) : undefined;
      const record = toRecord(r.log, scope, ingestedAt, r.log.idempotency_key ?? generated);
      const text = JSON.stringify(record);
      const claimAs = generated === undefined ? r.log.idempotency_key : GENERATED_KEY_SPACE + generated;
      if (this.fits(text)) valid.push({ index: i, log: r.log, record, text, claimAs });
      else {
        const message = `log is too large to store: at most ${this.deps.maxMessageBytes - MESSAGE_WRAPPER_BYTES} bytes as stored JSON`;
        fail(i, "validation_error", message, [{ ...fieldIssue([...pathOf(i), "payload"], message), type: "payload_too_large" }]);
      }
    }
    await this.checkPatients(scope, valid, pathOf, fail);
    if (opts.atomic && answer.errors.length > 0) {
      throw new AppError("validation", `${answer.errors.length} of ${raw.length} logs are invalid; nothing was written (atomic)`, answer.errors.flatMap((e) => e.details));
    }
    const { toStore, twins } = await this.claimKeys(scope, valid, answer);
    await this.store(scope, toStore, answer);
    this.answerTwins(twins, answer);
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

  /** Claims every idempotency key; logs whose key is already held become duplicates. */
  private async claimKeys(
    scope: WriteScope,
    valid: Valid[],
    answer: BatchAnswer,
  ): Promise<{ toStore: Pending[]; twins: { index: number; first: number }[] }> {
    const firstInBatch = new Map<string, Pending>();
    const twins: { index: number; first: number }[] = [];
    const pending: Pending[] = [];
    for (const { index, record, text, claimAs } of valid) {
      const p: Pending = { index, log: record, text };
      if (claimAs !== undefined) {
        p.key = this.deps.ledger.keyOf(claimAs);
        const twin = firstInBatch.get(p.key);
        if (twin) {
          // The same key twice in one batch: the first one decides, without a round trip
          // (answered once it has; see answerTwins).
          twins.push({ index, first: twin.index });
          continue;
        }
        firstInBatch.set(p.key, p);
      }
      pending.push(p);
    }
    const now = Date.now();
    this.claimedAt.set(answer, now);
    const keyed = pending.filter((p) => p.key !== undefined);
    const results = await this.deps.ledger.claimMany(
      scope.project_id,
      keyed.map((p) => ({ key: p.key!, claim: { log_id: p.log.id, patient_id: p.log.patient_id, claimed_at: now } })),
    );
    const toStore: Pending[] = pending.filter((p) => p.key === undefined);
    // A batch retried after a crash finds many of its keys held by its own earlier attempt:
    // each patient's history is read once for all of them, not once per key.
    const histories: Histories = new Map();
    await Promise.all(
      keyed.map(async (p, i) => {
        const r = results[i]!;
        if (r.won || (await this.retakeIfOrphan(scope, p, r.existing, histories))) {
          toStore.push(p);
          return;
        }
        // A patient token sees only its patient: a key another patient's log holds is a
        // duplicate still (keys are the project's), but that log's id is not its to learn.
        const theirs = scope.only_patient_id !== undefined && r.existing.patient_id !== scope.only_patient_id;
        answer.results[p.index] = { index: p.index, id: theirs ? null : r.existing.log_id, status: "duplicate" };
        answer.duplicates++;
      }),
    );
    return { toStore, twins };
  }

  /**
   * A held key is a duplicate once its log is known stored. While the holder may still
   * be publishing (inside the lease) we wait for it; after the lease, the patient's
   * history decides, and a claim whose log never landed is taken over.
   */
  private async retakeIfOrphan(scope: WriteScope, p: Pending, existing: Claim, histories: Histories): Promise<boolean> {
    const ledger = this.deps.ledger;
    const leaseEnd = existing.claimed_at + this.deps.claimLeaseMs;
    while (true) {
      if (await ledger.isMarkedStored(existing.log_id, existing.claimed_at)) return false;
      if (Date.now() >= leaseEnd) break;
      await sleep(Math.min(50, Math.max(1, leaseEnd - Date.now())));
    }
    // A history read before this claim's lease ended could miss the holder's late publish.
    let history = histories.get(existing.patient_id);
    if (!history || history.readAt < leaseEnd) {
      history = { readAt: Date.now(), ids: this.historyIds(scope, existing.patient_id) };
      histories.set(existing.patient_id, history);
    }
    if ((await history.ids).has(existing.log_id)) {
      await ledger.markStored([existing.log_id], existing.claimed_at);
      return false;
    }
    return ledger.replace(scope.project_id, p.key!, existing.log_id, { log_id: p.log.id, patient_id: p.log.patient_id, claimed_at: Date.now() });
  }

  /** The ids of every log stored for the patient (its subject is its history). */
  private async historyIds(scope: WriteScope, patientId: string): Promise<Set<string>> {
    const { names, js, jsm } = this.deps;
    const subject = names.logSubject(scope.organization_id, scope.project_id, patientId);
    const ids = new Set<string>();
    for await (const m of readSubject<PatientLogMessage>(js, jsm, names.logsStream, subject)) for (const l of m.data.logs) ids.add(l.id);
    return ids;
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

  private async store(scope: WriteScope, toStore: Pending[], answer: BatchAnswer): Promise<void> {
    const byPatient = new Map<string, Pending[]>();
    for (const p of toStore) {
      const list = byPatient.get(p.log.patient_id);
      if (list) list.push(p);
      else byPatient.set(p.log.patient_id, [p]);
    }
    const stored: string[] = [];
    const released: Pending[] = [];
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
              if (g.key) stored.push(g.log.id);
            }
          } catch (err) {
            for (const g of logs) {
              const message = `log could not be stored: ${(err as Error).message}; retry it`;
              answer.errors.push({ index: g.index, code: "storage_error", message, details: [{ type: "storage_error", message }] });
              answer.results[g.index] = { index: g.index, id: null, status: "failed" };
              answer.failed++;
              if (g.key) released.push(g);
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
    void this.deps.ledger.markStored(stored, this.claimedAt.get(answer) ?? Date.now()).catch(() => undefined);
    await Promise.all(released.map((g) => this.deps.ledger.release(scope.project_id, g.key!, g.log.id).catch(() => false)));
  }
}

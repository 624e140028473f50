import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import type { TopologyNames } from "../../infra/nats/topology.js";
import type { LogRecord } from "../../readmodels/log-record.js";
import type { ValidLogInput } from "./envelope.js";
import type { IdempotencyLedger } from "./idempotency-ledger.js";
import type { Claim, ClaimResult } from "./ledger-codec.js";
import type { BatchAnswer, WriteScope } from "./log-writer.js";
import { PatientLog } from "./patient-log.js";

/**
 * Where a log's key is claimed: the ledger (idempotency keys for good, or clients' log
 * ids for a day or two), the space in it (a project, or a project's day) and the key's digest.
 */
export interface KeyClaim {
  ledger: IdempotencyLedger;
  space: string;
  key: string;
}

/** A log that passed validation, as it will be stored, and its JSON text. */
export interface Valid {
  index: number;
  log: ValidLogInput;
  record: LogRecord;
  text: string;
  /** What its key is claimed as: the client's key, a generated one in its own namespace, or the client's log id. */
  claim: KeyClaim | undefined;
}

export interface Pending {
  index: number;
  log: LogRecord;
  /** JSON.stringify(log), made once when the log was validated. */
  text: string;
  claim?: KeyClaim;
}

/** A log whose key (or log id) a log of another patient holds. */
export interface KeyConflict {
  index: number;
  field: "idempotency_key" | "log_id";
}

/** A pending log that has a key to claim. */
type Keyed = Pending & { claim: KeyClaim };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A key claimed in a space of its own: no client key starts with NUL (the envelope refuses it). */
const inSpace = (space: string, key: string) => `\u0000${space}:${key}`;

/** Patients' stored log ids read during one batch's claims, with when each read began. */
type Histories = Map<string, { readAt: number; ids: Promise<Set<string>> }>;

/**
 * A batch's claims on the two ledgers: a client's idempotency key (or a key the feed
 * generated) for good, else a client's own log id for the day it was accepted and the
 * next. A log whose key is held is a duplicate of the holder, once the holder is known
 * stored, if the holder is the same patient's (else a conflict); a claim whose log never
 * landed is taken over.
 */
export class KeyClaims {
  constructor(
    private readonly deps: {
      names: TopologyNames;
      js: JetStreamClient;
      jsm: JetStreamManager;
      ledger: IdempotencyLedger;
      logIds: IdempotencyLedger;
      claimLeaseMs: number;
    },
  ) {}

  /**
   * What a log's key is claimed as, if it has one: its idempotency key (in `keySpace` when
   * the write names one), else its log id, else a generated key.
   */
  claimOf(scope: WriteScope, day: number, key?: string, logId?: string, generated?: string, keySpace?: string): KeyClaim | undefined {
    const { ledger, logIds } = this.deps;
    if (key !== undefined) return { ledger, space: scope.project_id, key: ledger.keyOf(keySpace === undefined ? key : inSpace(keySpace, key)) };
    if (logId !== undefined) return { ledger: logIds, space: `${scope.project_id}.${day}`, key: logIds.keyOf(logId) };
    if (generated !== undefined) return { ledger, space: scope.project_id, key: ledger.keyOf(inSpace("generated", generated)) };
    return undefined;
  }

  /** Remembers stored logs, so a retry is told "duplicate" at once. */
  markStored(logIds: string[], claimedAt: number): Promise<void> {
    return this.deps.ledger.markStored(logIds, claimedAt);
  }

  /** Gives a key back when its log could not be stored, so a retry can take it. */
  release(claim: KeyClaim, logId: string): Promise<boolean> {
    return claim.ledger.release(claim.space, claim.key, logId);
  }

  /** Claims every idempotency key and client log id; logs whose key is already held become duplicates. */
  async claimKeys(
    scope: WriteScope,
    valid: Valid[],
    answer: BatchAnswer,
    day: number,
  ): Promise<{ toStore: Pending[]; twins: { index: number; first: number }[]; conflicts: KeyConflict[]; claimedAt: number }> {
    const firstInBatch = new Map<string, Pending>();
    const twins: { index: number; first: number }[] = [];
    const pending: Pending[] = [];
    for (const { index, record, text, claim } of valid) {
      const p: Pending = { index, log: record, text };
      if (claim !== undefined) {
        p.claim = claim;
        // Keys of the two ledgers never meet: a log id reading like a client's key is another key.
        const twinKey = claim.ledger === this.deps.ledger ? claim.key : `id:${claim.key}`;
        const twin = firstInBatch.get(twinKey);
        if (twin) {
          // The same key twice in one batch: the first one decides, without a round trip
          // (answered once it has; see answerTwins).
          twins.push({ index, first: twin.index });
          continue;
        }
        firstInBatch.set(twinKey, p);
      }
      pending.push(p);
    }
    const now = Date.now();
    const keyed = pending.filter((p): p is Keyed => p.claim !== undefined);
    const results = await this.claimAll(scope, keyed, day, now);
    const toStore: Pending[] = pending.filter((p) => p.claim === undefined);
    // A batch retried after a crash finds many of its keys held by its own earlier attempt:
    // each patient's history is read once for all of them, not once per key.
    const histories: Histories = new Map();
    const conflicts: KeyConflict[] = [];
    await Promise.all(
      keyed.map(async (p, i) => {
        const r = results[i]!;
        if (r.won || (await this.retakeIfOrphan(scope, p, r.existing, histories))) {
          toStore.push(p);
          return;
        }
        // A key held by another patient's log is no retry of it: answered "duplicate", the
        // log would be lost while its sender is told it is stored. The holder is not named.
        if (r.existing.patient_id !== p.log.patient_id) {
          conflicts.push({ index: p.index, field: p.claim.ledger === this.deps.logIds ? "log_id" : "idempotency_key" });
          return;
        }
        answer.results[p.index] = { index: p.index, id: r.existing.log_id, status: "duplicate" };
        answer.duplicates++;
      }),
    );
    return { toStore, twins, conflicts, claimedAt: now };
  }

  /**
   * Claims each log's key in its ledger and space. A client log id already claimed the day
   * before (a re-send across midnight) is not claimed again: that claim decides, and the
   * log's claim moves to that day so an orphan is taken over there.
   */
  private async claimAll(scope: WriteScope, keyed: Keyed[], day: number, now: number): Promise<ClaimResult[]> {
    const results = new Array<ClaimResult>(keyed.length);
    const ids = keyed.flatMap((p, i) => (p.claim.ledger === this.deps.logIds ? [{ p, i }] : []));
    if (ids.length > 0) {
      const yesterday = `${scope.project_id}.${day - 1}`;
      const held = await this.deps.logIds.peekMany(yesterday, ids.map(({ p }) => p.claim.key));
      ids.forEach(({ p, i }, j) => {
        const existing = held[j];
        if (!existing) return;
        results[i] = { won: false, existing };
        p.claim = { ...p.claim, space: yesterday };
      });
    }
    // At most two groups: the project's idempotency keys, and today's log ids.
    const groups = new Map<string, { ledger: IdempotencyLedger; space: string; members: { p: Keyed; i: number }[] }>();
    keyed.forEach((p, i) => {
      if (results[i] !== undefined) return;
      const { ledger, space } = p.claim;
      const g = `${ledger === this.deps.ledger ? "k" : "i"}:${space}`;
      const group = groups.get(g);
      if (group) group.members.push({ p, i });
      else groups.set(g, { ledger, space, members: [{ p, i }] });
    });
    await Promise.all(
      [...groups.values()].map(async ({ ledger, space, members }) => {
        const claims = members.map(({ p }) => ({ key: p.claim.key, claim: { log_id: p.log.id, patient_id: p.log.patient_id, claimed_at: now } }));
        const won = await ledger.claimMany(space, claims);
        // claimMany answers each claim in order.
        members.forEach(({ i }, j) => (results[i] = won[j]!));
      }),
    );
    return results;
  }

  /**
   * A held key is a duplicate once its log is known stored. While the holder may still
   * be publishing (inside the lease) we wait for it; after the lease, the patient's
   * history decides, and a claim whose log never landed is taken over.
   */
  private async retakeIfOrphan(scope: WriteScope, p: Keyed, existing: Claim, histories: Histories): Promise<boolean> {
    const marks = this.deps.ledger;
    const leaseEnd = existing.claimed_at + this.deps.claimLeaseMs;
    while (true) {
      if (await marks.isMarkedStored(existing.log_id, existing.claimed_at)) return false;
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
      await marks.markStored([existing.log_id], existing.claimed_at);
      return false;
    }
    const { ledger, space, key } = p.claim;
    return ledger.replace(space, key, existing.log_id, { log_id: p.log.id, patient_id: p.log.patient_id, claimed_at: Date.now() });
  }

  /** The ids of every log stored for the patient (its subject is its history). */
  private async historyIds(scope: WriteScope, patientId: string): Promise<Set<string>> {
    const ids = new Set<string>();
    const owner = { organization_id: scope.organization_id, project_id: scope.project_id, patient_id: patientId };
    for await (const l of new PatientLog(this.deps).logs(owner)) ids.add(l.id);
    return ids;
  }
}

import type { KV } from "@nats-io/kv";
import { isWrongLastSequence, type JetStreamPublisher } from "../../infra/nats/jetstream-publisher.js";
import type { Redis } from "../../infra/redis.js";
import { digest } from "../control/hash.js";

export interface IdempotencyClaim {
  log_id: string;
  patient_id: string;
  /** Epoch ms: lets a later request tell an in-flight claim from one a crash left behind. */
  claimed_at: number;
}

export type ClaimOutcome = { won: true } | { won: false; existing: IdempotencyClaim; revision: number };

/**
 * Per-log idempotency keys that deduplicate forever: one KV entry per (project, key),
 * written with create() semantics (expected last subject sequence 0), so exactly one
 * request can hold a key, across instances and restarts. Claims travel through the
 * pipelined publisher: they are the per-log cost of the write path.
 *
 * A claim is taken before its log is published. Redis remembers which claims are
 * committed (their log is stored); it is only a cache: without it, a duplicate is
 * confirmed by reading the patient's history from JetStream.
 */
export class IdempotencyIndex {
  private readonly encoder = new TextEncoder();

  constructor(
    private readonly kv: KV,
    private readonly bucket: string,
    private readonly publisher: JetStreamPublisher,
    private readonly redis: Redis,
    private readonly redisPrefix: string,
  ) {}

  kvKey(project: string, key: string): string {
    return `${project}.${digest(key)}`;
  }

  private markerKey(kvKey: string): string {
    return `${this.redisPrefix}:idem:${kvKey}`;
  }

  async claim(kvKey: string, claim: IdempotencyClaim): Promise<ClaimOutcome> {
    try {
      await this.publisher.publish(`$KV.${this.bucket}.${kvKey}`, this.encoder.encode(JSON.stringify(claim)), {
        expectedLastSubjectSequence: 0,
      });
      return { won: true };
    } catch (err) {
      if (!isWrongLastSequence(err)) throw err;
    }
    const e = await this.kv.get(kvKey);
    if (!e || e.operation !== "PUT") {
      // Released by a failed request (a delete marker): take it with CAS on that revision.
      if (e && (await this.takeOver(kvKey, claim, e.revision))) return { won: true };
      return this.claim(kvKey, claim);
    }
    return { won: false, existing: e.json<IdempotencyClaim>(), revision: e.revision };
  }

  /** Replaces a released or orphaned claim, only if nobody changed it since `revision`. */
  async takeOver(kvKey: string, claim: IdempotencyClaim, revision: number): Promise<boolean> {
    try {
      await this.publisher.publish(`$KV.${this.bucket}.${kvKey}`, this.encoder.encode(JSON.stringify(claim)), {
        expectedLastSubjectSequence: revision,
      });
      return true;
    } catch (err) {
      if (isWrongLastSequence(err)) return false;
      throw err;
    }
  }

  /** Gives back claims whose logs could not be stored, so a retry can succeed. */
  async release(kvKeys: string[]): Promise<void> {
    await Promise.allSettled(kvKeys.map((k) => this.kv.delete(k)));
  }

  async markCommitted(kvKeys: string[]): Promise<void> {
    if (kvKeys.length === 0) return;
    const multi = this.redis.multi();
    // A marker only spares a duplicate the history read; a day covers client retries.
    for (const k of kvKeys) multi.set(this.markerKey(k), "1", { EX: 86_400 });
    await multi.execAsPipeline();
  }

  async isMarkedCommitted(kvKey: string): Promise<boolean> {
    return (await this.redis.exists(this.markerKey(kvKey))) === 1;
  }
}

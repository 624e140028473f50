import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager, type PubAck } from "@nats-io/jetstream";
import { headers } from "@nats-io/transport-node";
import { readSubject } from "./log-history.js";
import type { TopologyNames } from "./topology.js";

/** Header of a copied message: the stream sequence of the first layout's original. */
export const MIGRATED_FROM_HEADER = "Pss-Migrated-From";

export interface CopyDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  names: TopologyNames;
}

export interface CopyOptions {
  /** Publishes awaiting their ack at most. */
  window: number;
  /** Copies at most this many, then returns as if stopped (a test's crash midway). */
  limit?: number;
  /** Called before each publish: throws to stop the copy (the lock was lost). */
  assertHeld: () => void;
  /** Called with the counts as the copy goes. */
  progress: (copied: number, total: number) => void;
}

export interface CopyResult {
  copied: number;
  total: number;
  /** Highest original sequence copied so far, by this run or an earlier one (0: none). */
  through: number;
}

/** How many messages of `filter` lie after `after` in the stream (a consumer's count, not a listing of subjects). */
export async function countAfter(jsm: JetStreamManager, stream: string, filter: string, after = 0): Promise<number> {
  const start = after > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: after + 1 } : {};
  const c = await jsm.consumers.add(stream, { filter_subject: filter, ack_policy: AckPolicy.None, inactive_threshold: 30_000_000_000, ...start });
  await jsm.consumers.delete(stream, c.name).catch(() => undefined);
  return c.num_pending;
}

/**
 * The highest original sequence already copied. While a migration runs nobody else writes
 * the log stream, so the last message on a partitioned subject is the last copy made (or
 * there is none, and nothing was copied).
 */
export async function copiedThroughSeq(deps: CopyDeps): Promise<number> {
  const m = await deps.jsm.streams.getMessage(deps.names.logsStream, { last_by_subj: deps.names.partitionedLogSubjects });
  const from = m?.header?.get(MIGRATED_FROM_HEADER);
  return from ? Number(from) : 0;
}

/** The partitioned subject of a first-layout subject `{ns}.log.{org}.{project}.{patient}`. */
function targetOf(names: TopologyNames, legacySubject: string): string {
  const [org, project, patient] = legacySubject.split(".").slice(-3) as [string, string, string];
  return names.logSubject(org, project, patient);
}

function streamChanged(err: unknown): Error {
  return new Error(
    `copying the log stream to the partitioned layout: a copy was refused (${(err as Error).message}); ` +
      "another process writes the log stream: stop every member of the earlier version, then start again (the copy resumes where it stopped)",
    { cause: err },
  );
}

/**
 * Copies each first-layout message after the last one copied, in stream order, to its
 * partitioned subject with the same body. Each publish expects the stream's last sequence
 * to be the previous copy's: publishes are pipelined (`window` in flight), yet a lost or
 * foreign message stops the copy instead of leaving a gap, a duplicate or another order.
 */
export async function copyLegacyLogs(deps: CopyDeps, opts: CopyOptions): Promise<CopyResult> {
  const { js, jsm, names } = deps;
  const after = await copiedThroughSeq(deps);
  const total = await countAfter(jsm, names.logsStream, names.legacyLogSubjects, after);
  const result: CopyResult = { copied: 0, total, through: after };
  if (total === 0) return result;
  let expected = (await jsm.streams.info(names.logsStream)).state.last_seq;
  const inflight: Promise<PubAck>[] = [];
  const history = readSubject(js, jsm, names.logsStream, names.legacyLogSubjects, { fromSeq: after + 1, decode: (data) => data });
  try {
    for await (const m of history) {
      if (opts.limit !== undefined && result.copied >= opts.limit) break;
      opts.assertHeld();
      const h = headers();
      h.set(MIGRATED_FROM_HEADER, String(m.seq));
      const ack = js.publish(targetOf(names, m.subject), m.data, { headers: h, expect: { lastSequence: expected } });
      // Awaited in order below; the handler only keeps a refusal from going unhandled meanwhile.
      ack.catch(() => undefined);
      inflight.push(ack);
      expected++;
      result.copied++;
      result.through = m.seq;
      if (inflight.length >= opts.window) await inflight.shift()!.catch((err) => Promise.reject(streamChanged(err)));
      if (result.copied % 1_000 === 0) opts.progress(result.copied, total);
    }
    await Promise.all(inflight).catch((err) => Promise.reject(streamChanged(err)));
  } finally {
    await history.return(undefined);
  }
  opts.progress(result.copied, total);
  return result;
}

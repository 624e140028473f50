import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import { readSubject, type StoredBatch } from "../../infra/nats/log-history.js";
import type { TopologyNames } from "../../infra/nats/topology.js";
import { decodeLogMessage, type LogSubjectOwner, type StoredLogMessage } from "./stored-message.js";

export type PatientLogDeps = { js: JetStreamClient; jsm: JetStreamManager; names: TopologyNames };

/**
 * A patient's log: its subject of the log stream, `{ns}.log.{partition}.{org}.{project}.{patient}`,
 * is its whole history. Every reader of one patient's history goes through here (the
 * state engine's rebuilds, the write path's checks of claimed keys, /logs, a job's replay
 * and review, erasure), so the layout is known in one place. The write path appends
 * (src/logs/log-writer.ts publishes to `subject`).
 */
export class PatientLog {
  constructor(private readonly deps: PatientLogDeps) {}

  subject(owner: LogSubjectOwner): string {
    return this.deps.names.logSubject(owner.organization_id, owner.project_id, owner.patient_id);
  }

  /**
   * Every message in stream order, up to the last one stored when called (see readSubject),
   * each decoded with decodeLogMessage: what the service did not write reads as no logs.
   */
  read(owner: LogSubjectOwner): AsyncGenerator<StoredBatch<StoredLogMessage>> {
    const { js, jsm, names } = this.deps;
    return readSubject(js, jsm, names.logsStream, this.subject(owner), { decode: (data) => decodeLogMessage(data, owner) });
  }

  /** Every log, in acceptance order (a message the service did not write holds none). */
  async *logs(owner: LogSubjectOwner): AsyncGenerator<StoredLogMessage["logs"][number]> {
    for await (const m of this.read(owner)) yield* m.data.logs;
  }

  /**
   * Stream sequence of the last message stored (0: none). A JetStream that does not answer
   * throws: an empty answer would serve a patient with history as one without.
   */
  async lastSeq(owner: LogSubjectOwner): Promise<number> {
    try {
      return (await this.deps.jsm.streams.getMessage(this.deps.names.logsStream, { last_by_subj: this.subject(owner) }))?.seq ?? 0;
    } catch (err) {
      if (String((err as Error).message).includes("no message found")) return 0;
      throw err;
    }
  }

  /** Stream sequence of the first message stored (0: none, or JetStream did not answer): one direct get. */
  async firstSeq(owner: LogSubjectOwner): Promise<number> {
    const m = await this.deps.jsm.direct.getMessage(this.deps.names.logsStream, { seq: 1, next_by_subj: this.subject(owner) }).catch(() => null);
    return m?.seq ?? 0;
  }

  /** Removes every message (erasure). */
  async purge(owner: LogSubjectOwner): Promise<void> {
    await this.deps.jsm.streams.purge(this.deps.names.logsStream, { filter: this.subject(owner) });
  }
}

import { DiscardPolicy, RetentionPolicy, StorageType, type JetStreamManager } from "@nats-io/jetstream";

/** One log as the write path stores it (a vitals reading, 389 bytes of JSON): the JetStream-only benches' payload. */
export const SAMPLE_LOG = {
  id: "log_01JTESTXXXXXXXXXXXXXXXXXXX", log_type: "vitals_measurement", organization_id: "org_default", project_id: "prj_default",
  patient_id: "pat_01JTESTYYYYYYYYYYYYYYYYYYY", timestamp: "2026-05-01T00:00:00.000Z", ingested_at: "2026-05-01T00:00:00.000Z",
  idempotency_key: "abcd-123456", payload: { measurements: { heart_rate_bpm: 72, systolic_bp_mmhg: 120 }, source: "device" },
};

/** A file-backed stream named `name`, made again empty, laid out as the log stream is. */
export async function freshStream(jsm: JetStreamManager, name: string, subjects: string[]): Promise<void> {
  await jsm.streams.delete(name).catch(() => undefined);
  await jsm.streams.add({ name, subjects, storage: StorageType.File, retention: RetentionPolicy.Limits, discard: DiscardPolicy.Old, allow_direct: true, max_msg_size: 4 * 1024 * 1024 });
}

/** Calls `send(i)` for every i below `count`, `inflight` at a time (each waits for its answer before the next). */
export async function inFlight(count: number, inflight: number, send: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: inflight }, async () => {
    while (next < count) await send(next++);
  }));
}

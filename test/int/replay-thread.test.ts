import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReplayThread } from "../../actors/ingestion/replay-thread.js";
import type { ChunkOutcome, ReplayWriteInput } from "../../actors/ingestion/replay-writes.js";
import { BOOTSTRAP } from "../../src/control/bootstrap.js";
import { readSubject } from "../../infra/nats/log-history.js";
import type { PatientLogMessage } from "../../src/logs/log-writer.js";
import type { LogRecord } from "../../readmodels/log-record.js";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
let thread: ReplayThread;
beforeAll(async () => {
  t = await startStack();
  thread = new ReplayThread(t.config);
});
afterAll(async () => {
  await thread.close();
  await t.close();
});

const scope = { organization_id: BOOTSTRAP.organization_id, project_id: BOOTSTRAP.project_id };
const line = (n: number, data: Record<string, unknown>) => ({ line: n, patient: "", text: JSON.stringify({ type: "log", data }) });
const symptom = (ts: string, score: number, key: string) => ({
  event_type: "symptom_report",
  timestamp: ts,
  idempotency_key: key,
  payload: { instrument: "esas_r", symptoms: [{ name: "pain", score }] },
});

async function history(pid: string): Promise<LogRecord[]> {
  const { js, jsm, names } = t.services.topology;
  const out: LogRecord[] = [];
  for await (const m of readSubject<PatientLogMessage>(js, jsm, names.logsStream, names.logSubject(scope.organization_id, scope.project_id, pid))) out.push(...m.data.logs);
  return out;
}

async function write(input: ReplayWriteInput, beforeChunk?: () => Promise<void>): Promise<ChunkOutcome[]> {
  const outcomes: ChunkOutcome[] = [];
  await thread.write(input, new AbortController().signal, (o) => outcomes.push(o), beforeChunk);
  return outcomes;
}

describe("the replay thread", () => {
  it("writes staged lines through its own LogWriter: sorted by time, bad lines reported by line, keys deduplicated", async () => {
    const pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id as string;
    const input: ReplayWriteInput = {
      scope,
      jobId: "job_test",
      patients: [
        [
          pid,
          [
            line(3, symptom("2026-03-02T10:00:00Z", 7, "k-late")),
            line(4, { event_type: "symptom_report", timestamp: "2026-03-01T12:00:00Z", payload: { symptoms: "not a list" } }),
            line(2, symptom("2026-03-01T10:00:00Z", 2, "k-early")),
          ],
        ],
      ],
    };
    let chunks = 0;
    const first = await write(input, async () => void chunks++);
    expect(chunks).toBe(1);
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ processed: 2, duplicates: 0, failed: 1 });
    expect(first[0]!.errors).toEqual([expect.objectContaining({ line: 4, code: "validation_error", message: expect.stringMatching(/^line\.4\.payload/) })]);

    // Stored in timestamp order, each carrying the job and its file line.
    const stored = await history(pid);
    expect(stored.map((l) => [l.timestamp, l.metadata?.ingestion_line, l.metadata?.ingestion_job_id])).toEqual([
      ["2026-03-01T10:00:00.000Z", 2, "job_test"],
      ["2026-03-02T10:00:00.000Z", 3, "job_test"],
    ]);

    const again = await write(input);
    expect(again[0]).toMatchObject({ processed: 2, duplicates: 2, failed: 1 });
  });

  it("keeps the first line of a file that repeats an idempotency_key, even when a later line has an earlier timestamp", async () => {
    const pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id as string;
    const input: ReplayWriteInput = { scope, jobId: "job_keys", patients: [[pid, [line(2, symptom("2026-03-05T10:00:00Z", 3, "dup-1")), line(3, symptom("2026-03-01T10:00:00Z", 9, "dup-1"))]]] };
    const outcomes = await write(input);
    expect(outcomes.reduce((n, o) => n + o.duplicates, 0)).toBe(1);
    expect(outcomes.reduce((n, o) => n + o.processed, 0)).toBe(2);
    expect((await history(pid)).map((l) => [l.timestamp, l.metadata?.ingestion_line])).toEqual([["2026-03-05T10:00:00.000Z", 2]]);
  });

  it("stops a write when its job is stopped", async () => {
    const pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id as string;
    const stop = new AbortController();
    const entries = Array.from({ length: 2_500 }, (_, i) => line(i + 1, symptom(new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(), i % 11, `s-${i}`)));
    let chunks = 0;
    const written = thread.write({ scope, jobId: "job_stop", patients: [[pid, entries]] }, stop.signal, () => undefined, async () => {
      // The first chunk goes; before the second the job is stopped.
      if (++chunks === 2) stop.abort(new Error("cancelled by the test"));
    });
    await expect(written).rejects.toThrow("cancelled by the test");
    expect(chunks).toBe(2);
    expect((await history(pid)).length).toBe(1_000);
  });
});

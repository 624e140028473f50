import { parentPort, workerData } from "node:worker_threads";
import type { Config } from "../../src/config.js";
import { openLogWriter } from "../../src/logs/log-writer-wiring.js";
import { writePatients } from "./replay-writes.js";
import { errorMessage } from "./stage-deps.js";
import type { FromReplayWorker, ToReplayWorker } from "./replay-thread.js";

/**
 * The replay thread (see replay-thread.ts): runs writePatients for the job's thread on
 * a LogWriter of its own, so parsing the staged lines and the write path's validation,
 * idempotency claims and publishing run on the second core.
 */
if (parentPort === null) throw new Error("replay-worker.ts runs as a worker thread (see replay-thread.ts)");
const port = parentPort;
const post = (m: FromReplayWorker) => port.postMessage(m);

const opened = await openLogWriter((workerData as { config: Config }).config).catch((err: unknown) => {
  post({ type: "init-failed", message: errorMessage(err) });
  return null;
});

if (opened) {
  const running = new Map<number, { abort: AbortController; proceed?: () => void }>();
  port.on("message", (m: ToReplayWorker) => {
    if (m.type === "abort") running.get(m.id)?.abort.abort(new Error("job stopped"));
    else if (m.type === "continue") running.get(m.id)?.proceed?.();
    else if (m.type === "close") void opened.close().finally(() => port.close());
    else if (m.type === "write") {
      const task = { abort: new AbortController() } as { abort: AbortController; proceed?: () => void };
      running.set(m.id, task);
      // The job's thread may hold each chunk back (a test hook); it says when to go on.
      const beforeChunk = m.hooked
        ? () =>
            new Promise<void>((resolve) => {
              task.proceed = resolve;
              post({ type: "before-chunk", id: m.id });
            })
        : undefined;
      writePatients(opened.writer, m.input, task.abort.signal, (outcome) => post({ type: "chunk", id: m.id, outcome }), beforeChunk)
        .then(
          () => post({ type: "done", id: m.id }),
          (err: unknown) => post({ type: "failed", id: m.id, message: errorMessage(err) }),
        )
        .finally(() => running.delete(m.id));
    }
  });
  post({ type: "ready" });
}

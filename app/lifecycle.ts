import type { Logger } from "pino";

/**
 * Longest a stop (SIGTERM, SIGINT) takes: one process's close (requests finished,
 * deliveries acknowledged, backends closed), and the supervisor's whole ordered stop.
 */
export const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Exit code of a process whose configuration is refused (a bad variable, or PSS_PARTITIONS
 * against the namespace's recorded count): a restart would meet the same refusal, so the
 * supervisor stops instead of starting another.
 */
export const CONFIG_EXIT_CODE = 2;

/** What a supervised child tells its supervisor once it does its work. */
export interface ReadyMessage {
  pss: "ready";
}

export const isReadyMessage = (m: unknown): m is ReadyMessage => typeof m === "object" && m !== null && (m as { pss?: unknown }).pss === "ready";

/** Tells the supervisor, when there is one, that this process is ready. */
export function reportReady(): void {
  const message: ReadyMessage = { pss: "ready" };
  process.send?.(message);
}

/**
 * Stops the process on each of `signals`: runs the close given to the returned setter,
 * bounded by SHUTDOWN_GRACE_MS, then exits. A signal that comes while the process still
 * starts exits at once: nothing it made is needed (what was not acknowledged is
 * delivered again). `ignored` signals are logged and nothing else.
 */
export function stopOn(log: Logger, signals: NodeJS.Signals[], ignored: NodeJS.Signals[] = []): (close: () => Promise<void>) => void {
  let close: (() => Promise<void>) | null = null;
  let closing = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, "shutting down");
    // A backend that stopped answering (Redis gone, NATS reconnecting) must not hold the
    // process: what was not acknowledged is delivered again after the restart.
    setTimeout(() => {
      log.warn({ signal, after_ms: SHUTDOWN_GRACE_MS }, "shutdown did not finish in time; exiting");
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    try {
      await close?.();
    } catch (err) {
      log.error({ err }, "shutdown failed");
      process.exit(1);
    }
    process.exit(0);
  };
  for (const s of signals) process.on(s, () => void stop(s));
  for (const s of ignored) process.on(s, () => log.info({ signal: s }, "signal ignored: the supervisor stops this process once the api processes have stopped"));
  return (fn) => {
    close = fn;
  };
}

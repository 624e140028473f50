import { readFile } from "node:fs/promises";
import { ValidationError, type BatchAnswer, type ErrorDetail, type LogInput } from "../../client/index.js";
import { arg, int, UsageError, type Command, type Io } from "../command.js";
import { json, readStdin } from "../output.js";

/** Logs from a JSON array, a {"logs":[...]} object, or JSON Lines (one log per line). */
export function parseLogs(text: string, source: string): LogInput[] {
  const trimmed = text.trim();
  if (trimmed === "") throw new UsageError(`${source} holds no logs`);
  try {
    const v = JSON.parse(trimmed) as unknown;
    if (Array.isArray(v)) return v as LogInput[];
    if (v && typeof v === "object" && Array.isArray((v as { logs?: unknown }).logs)) return (v as { logs: LogInput[] }).logs;
    return [v as LogInput];
  } catch {
    // Not one JSON document: read it as JSON Lines.
  }
  return trimmed.split("\n").flatMap((line, i) => {
    if (line.trim() === "") return [];
    try {
      return [JSON.parse(line) as LogInput];
    } catch (err) {
      throw new UsageError(`${source} line ${i + 1} is not JSON: ${(err as Error).message}`, { cause: err });
    }
  });
}

/** A path or message that starts with a log's place in its request ("logs.3.payload…"), placed `offset` logs later. */
function renumber(s: string, from: number, to: number): string {
  const head = `logs.${from}`;
  return s.startsWith(head) && !/\d/.test(s.charAt(head.length)) ? `logs.${to}${s.slice(head.length)}` : s;
}

/** A detail located in a sub-batch (["body","logs",i,...], field "logs.i...."), located in the whole input instead. */
function shiftDetail<D extends Record<string, unknown>>(d: D, offset: number): D {
  const loc = d.location;
  if (offset === 0 || !Array.isArray(loc) || loc[0] !== "body" || loc[1] !== "logs" || typeof loc[2] !== "number") return d;
  const from = loc[2];
  const to = from + offset;
  const rest: unknown[] = loc.slice(3);
  return {
    ...d,
    location: ["body", "logs", to, ...rest],
    ...(typeof d.field === "string" ? { field: renumber(d.field, from, to) } : {}),
    ...(typeof d.message === "string" ? { message: renumber(d.message, from, to) } : {}),
  };
}

/** A sub-batch's error at its position in the whole input: index, message and details agree. */
export function shiftError(e: BatchAnswer["errors"][number], offset: number): BatchAnswer["errors"][number] {
  if (offset === 0) return e;
  return { ...e, index: e.index + offset, message: renumber(e.message, e.index, e.index + offset), details: e.details.map((d) => shiftDetail(d, offset)) };
}

async function readSource(file: string, io: Io): Promise<string> {
  return file === "-" ? readStdin(io) : readFile(file, "utf8");
}

export const logsCommand: Command = {
  name: "logs",
  summary: "Send logs: pss logs send FILE|-",
  help: `Usage: pss logs send FILE|- [--atomic] [--batch-size N] [--json]

Sends logs to POST /v1/logs/batch. FILE (or - for stdin) holds a JSON array of logs, an
object {"logs":[...]}, or JSON Lines. A log is
  {"log_type","patient_id","timestamp"?,"payload","idempotency_key"?,"log_id"?,"trace"?}.
A log without a timestamp is dated when the service accepts it. Each log is validated on
its own; rejected ones are listed on stderr.

Exit code: 0 when every log was accepted (or was a duplicate), 1 otherwise.

Options:
  --atomic           Any invalid log rejects its whole batch (nothing of it is stored)
  --batch-size N     Logs per request (default 1000)

Example:
  echo '[{"log_type":"user_login","patient_id":"pat_...","timestamp":"2026-03-01T10:00:00Z","payload":{}}]' | pss logs send -`,
  options: { atomic: { type: "boolean" }, "batch-size": { type: "string" } },
  async run({ args, values, io, client }) {
    const sub = arg(args, 0, "subcommand (send)");
    if (sub !== "send") throw new UsageError(`unknown subcommand logs ${sub}`);
    const file = arg(args, 1, "FILE (or - for stdin)");
    const logs = parseLogs(await readSource(file, io), file === "-" ? "stdin" : file);
    const size = int(values["batch-size"], "batch-size") ?? 1000;
    if (size < 1) throw new UsageError("--batch-size must be at least 1");
    // Nothing to send, so the service (and the credential) is never asked: say so.
    if (logs.length === 0) io.err(`${file === "-" ? "stdin" : file} holds no logs: nothing was sent\n`);
    const c = await client();
    const total: BatchAnswer = { accepted: 0, failed: 0, duplicates: 0, errors: [], results: [] };
    for (let at = 0; at < logs.length; at += size) {
      const end = Math.min(logs.length, at + size);
      const a = await c.logs.batch(logs.slice(at, end), { atomic: values.atomic === true }).catch((err: unknown) => {
        // An atomic batch's 422 locates its logs within the batch: locate them in the input.
        if (!(err instanceof ValidationError) || at === 0) throw err;
        throw new ValidationError(`${err.message} (in the batch of logs ${at}-${end - 1}; the ${at} logs before it were sent)`, {
          status_code: err.status_code,
          error_type: err.error_type,
          details: err.details.map((d) => shiftDetail<ErrorDetail>(d, at)),
          body: err.body,
          ...(err.request_id !== undefined ? { request_id: err.request_id } : {}),
        });
      });
      total.accepted += a.accepted;
      total.failed += a.failed;
      total.duplicates += a.duplicates;
      total.errors.push(...a.errors.map((e) => shiftError(e, at)));
      total.results.push(...a.results.map((r) => ({ ...r, index: r.index + at })));
    }
    if (values.json) io.out(`${json(total)}\n`);
    else {
      for (const e of total.errors) io.err(`log ${e.index}: ${e.code}: ${e.message}\n`);
      io.out(`accepted ${total.accepted}, duplicates ${total.duplicates}, failed ${total.failed}\n`);
    }
    return total.failed > 0 ? 1 : 0;
  },
};

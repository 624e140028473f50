import { readFile } from "node:fs/promises";
import { ValidationError, type BatchAnswer, type ErrorDetail, type LogInput } from "../../client/index.js";
import { arg, noMoreArgs, positiveInt, UsageError, type Command, type Io } from "../command.js";
import { json, readStdin } from "../output.js";

/**
 * Logs from a JSON array, a {"logs":[...]} object, or JSON Lines (one log per line); for
 * JSON Lines, each log's line number too, which `pss validate` reports the same file by.
 */
export function parseLogs(text: string, source: string): { logs: LogInput[]; lines?: number[] } {
  const trimmed = text.trim();
  if (trimmed === "") throw new UsageError(`${source} holds no logs`);
  try {
    const v = JSON.parse(trimmed) as unknown;
    if (Array.isArray(v)) return { logs: v as LogInput[] };
    if (v && typeof v === "object" && Array.isArray((v as { logs?: unknown }).logs)) return { logs: (v as { logs: LogInput[] }).logs };
    return { logs: [v as LogInput] };
  } catch {
    // Not one JSON document: read it as JSON Lines.
  }
  const logs: LogInput[] = [];
  const lines: number[] = [];
  // Numbered in the text as given: the leading blank lines trim() dropped count too.
  const first = text.slice(0, text.indexOf(trimmed)).split("\n").length;
  trimmed.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      logs.push(JSON.parse(line) as LogInput);
      lines.push(first + i);
    } catch (err) {
      throw new UsageError(`${source} line ${first + i} is not JSON: ${(err as Error).message}`, { cause: err });
    }
  });
  return { logs, lines };
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

/** The service's most logs per batch, when a batch was refused for having more. */
function overBatchLimit(err: ValidationError): number | undefined {
  const d = err.details[0];
  const at = d?.location;
  if (!Array.isArray(at) || at.length !== 2 || at[0] !== "body" || at[1] !== "logs") return undefined;
  const n = /more than (\d+) items/.exec(String(d?.message))?.[1];
  return n === undefined ? undefined : Number(n);
}

/**
 * A failure without an answer after earlier batches were: what went through, and what to
 * send again (a keyless log sent again may be stored twice; a keyed one never is).
 */
function unconfirmedFrom(err: unknown, at: number, total: BatchAnswer): Error {
  const message = `${(err as Error).message}; logs 0-${at - 1} were sent first (accepted ${total.accepted}, duplicates ${total.duplicates}, failed ${total.failed}), ` +
    `logs from ${at} on are unconfirmed: send them again (with idempotency keys they are stored once however often they are sent)`;
  return new Error(message, { cause: err });
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
    noMoreArgs(args, 2, "pss logs send takes one FILE (or -); send each file on its own");
    const size = positiveInt(values["batch-size"], "batch-size") ?? 1000;
    const { logs, lines } = parseLogs(await readSource(file, io), file === "-" ? "stdin" : file);
    // Nothing to send, so the service (and the credential) is never asked: say so.
    if (logs.length === 0) io.err(`${file === "-" ? "stdin" : file} holds no logs: nothing was sent\n`);
    const c = await client();
    const total: BatchAnswer = { accepted: 0, failed: 0, duplicates: 0, errors: [], results: [] };
    for (let at = 0; at < logs.length; at += size) {
      const end = Math.min(logs.length, at + size);
      const a = await c.logs.batch(logs.slice(at, end), { atomic: values.atomic === true }).catch((err: unknown) => {
        const limit = err instanceof ValidationError ? overBatchLimit(err) : undefined;
        if (limit !== undefined) throw new UsageError(`--batch-size ${size} is over the service's ${limit} logs per batch: use --batch-size ${limit} or less`, { cause: err });
        if (!(err instanceof ValidationError)) throw at === 0 ? err : unconfirmedFrom(err, at, total);
        // An atomic batch's 422 locates its logs within the batch: locate them in the input.
        if (at === 0) throw err;
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
      for (const e of total.errors) io.err(`log ${e.index}${lines ? ` (line ${lines[e.index]})` : ""}: ${e.code}: ${e.message}\n`);
      io.out(`accepted ${total.accepted}, duplicates ${total.duplicates}, failed ${total.failed}\n`);
    }
    return total.failed > 0 ? 1 : 0;
  },
};

import { createInterface } from "node:readline";
import type { Io } from "./command.js";

export const json = (v: unknown): string => JSON.stringify(v, null, 2);

/** Widest a table cell gets before it is cut with an ellipsis. */
const MAX_CELL = 60;

/** A value as text: nothing for null, a string as it is, any other value (all are read from JSON) as JSON. */
function text(v: unknown): string {
  if (v === null || v === undefined) return "";
  return typeof v === "string" ? v : JSON.stringify(v);
}

function cell(v: unknown): string {
  const s = text(v);
  return s.length > MAX_CELL ? `${s.slice(0, MAX_CELL - 1)}…` : s;
}

/** Rows as an aligned text table; columns are every key in first-seen order unless given. */
export function table(rows: Record<string, unknown>[], columns?: string[]): string {
  if (rows.length === 0) return "(no rows)";
  const cols = columns ?? [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cells = rows.map((r) => cols.map((c) => cell(r[c])));
  const widths = cols.map((c, i) => Math.max(c.length, ...cells.map((row) => (row[i] ?? "").length)));
  const line = (parts: string[]) => parts.map((p, i) => p.padEnd(widths[i] ?? 0)).join("  ").trimEnd();
  return [line(cols), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n");
}

/** Key: value lines for one object (nested values as JSON). */
export function record(o: Record<string, unknown>): string {
  const w = Math.max(...Object.keys(o).map((k) => k.length));
  return Object.entries(o).map(([k, v]) => `${k.padEnd(w)}  ${text(v)}`).join("\n");
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}

/**
 * A progress bar on stderr. On a terminal it redraws in place; otherwise (a pipe, a CI
 * log) it prints a line at each quarter so logs stay short.
 */
export class ProgressBar {
  private lastQuarter = -1;
  private drawn = false;

  constructor(
    private readonly io: Io,
    private readonly label: string,
    private readonly width = 30,
  ) {}

  update(done: number, total: number, suffix = ""): void {
    const frac = total > 0 ? Math.min(1, done / total) : 1;
    const filled = Math.round(frac * this.width);
    const text = `${this.label} [${"#".repeat(filled)}${".".repeat(this.width - filled)}] ${String(Math.floor(frac * 100)).padStart(3)}% ${suffix}`;
    if (this.io.errIsTTY) {
      this.io.err(`\r${text}\x1b[K`);
      this.drawn = true;
      return;
    }
    const quarter = Math.floor(frac * 4);
    if (quarter > this.lastQuarter) {
      this.lastQuarter = quarter;
      this.io.err(`${text}\n`);
    }
  }

  /** Ends the in-place line. */
  done(): void {
    if (this.drawn) this.io.err("\n");
    this.drawn = false;
  }
}

/** Asks a yes/no question on stderr and reads the answer from stdin; no terminal or no answer means no. */
export async function confirm(io: Io, question: string): Promise<boolean> {
  io.err(`${question} [y/N] `);
  const rl = createInterface({ input: io.stdin, terminal: false });
  try {
    for await (const line of rl) return /^y(es)?$/i.test(line.trim());
    return false;
  } finally {
    rl.close();
  }
}

/** All of stdin as text. */
export async function readStdin(io: Io): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of io.stdin) chunks.push(typeof c === "string" ? Buffer.from(c) : c);
  return Buffer.concat(chunks).toString("utf8");
}

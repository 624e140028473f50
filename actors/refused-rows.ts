import type { JetStreamClient } from "@nats-io/jetstream";
import type { TopologyNames } from "../infra/nats/topology.js";
import { middleOfRows } from "../infra/clickhouse/encoded-rows.js";
import { fitLetter, type DeadLetter } from "./device-feed.js";
import { errorClass } from "../src/error-class.js";
import { isIdToken } from "../src/ids.js";

/** ClickHouse names the row it could not read ("(at row 2)"): the data is at fault, not the server. */
export const namesARow = (err: unknown): boolean => {
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === "string" && /\(at row \d+\)/.test(message);
};

/** The inserts of one batch, as insertSettingAside drives them. */
export interface RowInserts {
  /** Inserts encoded rows (JSONCompactEachRow lines); rejects with what ClickHouse answered. */
  insert(rows: Buffer): Promise<void>;
  /** Whether ClickHouse takes an insert at all now (an empty one): if not, no row is at fault. */
  answers(): Promise<boolean>;
  /** False once the projector stops: the batch stays unacknowledged and comes again. */
  running(): boolean;
  /** Waits before trying `rows` rows again, after a failure no row is to blame for (ClickHouse down). */
  pause(err: unknown, rows: number): Promise<void>;
  /** A row ClickHouse refuses: it is set aside (dead-lettered) and the batch goes on without it. */
  refused(row: Buffer, err: unknown): void;
}

const countRows = (rows: Buffer) => {
  let n = 0;
  for (let i = rows.indexOf(0x0a); i >= 0; i = rows.indexOf(0x0a, i + 1)) n++;
  return n;
};

/**
 * Inserts a batch of encoded rows so that no row can hold the stream back. The normal case
 * is one insert. When it fails, the batch is cut in halves, and each half inserted (or cut
 * again) in turn, until the rows ClickHouse refuses stand alone: one bad row among 20,000
 * costs about 30 inserts, most of them small. A lone row is set aside when ClickHouse
 * names it as unreadable, or when other rows of the batch landed meanwhile; when ClickHouse
 * takes nothing (down, or a full disk: even an empty insert fails, or no row of the batch
 * lands), nothing is set aside and the rows wait, as in an outage. Answers false when the
 * projector stopped before every row landed or was set aside.
 */
export async function insertSettingAside(rows: Buffer, io: RowInserts): Promise<boolean> {
  const todo = [rows];
  let landed = false;
  while (todo.length > 0) {
    if (!io.running()) return false;
    const part = todo.pop()!;
    let err: unknown;
    try {
      await io.insert(part);
      landed = true;
      continue;
    } catch (e) {
      err = e;
    }
    const cut = middleOfRows(part);
    const rowAtFault = namesARow(err);
    if (cut > 0 && (rowAtFault || (await io.answers()))) {
      todo.push(part.subarray(cut), part.subarray(0, cut));
    } else if (cut === 0 && (rowAtFault || landed)) {
      io.refused(part, err);
    } else {
      await io.pause(err, countRows(part));
      todo.push(part);
    }
  }
  return true;
}

/** The identifiers of a log the projector set aside, as its dead letter names it. */
export interface SetAsideLog {
  organization_id: string;
  project_id: string;
  patient_id: string;
  log_id: string;
  log_type: string;
  stream_seq: number;
}

/** The first line of ClickHouse's answer, without the rows it quotes after it. */
function whyRefused(err: unknown): string {
  const message = String((err as { message?: unknown } | null)?.message ?? err);
  const line = message.split("\n", 1)[0]!.replace(/: \(at row \d+\).*$/, "");
  return line.length > 500 ? `${line.slice(0, 500)}…` : line;
}

/** The identifiers of a log from its encoded row (`columns` names the row's values, in order). */
export function idsOfRow(row: Buffer, columns: readonly string[]): SetAsideLog {
  const v = JSON.parse(row.toString("utf8")) as unknown[];
  const at = (c: string) => String(v[columns.indexOf(c)]);
  return { organization_id: at("organization_id"), project_id: at("project_id"), patient_id: at("patient_id"), log_id: at("id"), log_type: at("type"), stream_seq: Number(at("stream_seq")) };
}

/**
 * The dead letter of a stored log that the log query's store cannot hold. The log itself
 * stays in the stream (its patient's state and GET /v1/state/{pid}/logs have it); the
 * letter, in its project's dead letters, says why the log query does not.
 */
function setAsideLetter(log: SetAsideLog, err: unknown, subject: string): DeadLetter {
  const cls = errorClass(err);
  return {
    received_at: new Date().toISOString(),
    subject,
    reason: "not_queryable",
    errors: [
      {
        index: 0,
        code: "not_queryable",
        message: `log ${log.log_id} is stored and in its patient's state, but the log query cannot hold it (${cls.error}): ${whyRefused(err)}`,
        details: [],
      },
    ],
    message: log,
  };
}

/** A dead-letter subject token: an id, else `_` (a subject of the log stream may carry anything, "*" included). */
const letterToken = (t: string) => (isIdToken(t) ? t : "_");
const encoder = new TextEncoder();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The dead letters of one batch's set-aside logs. They are stored before the batch is
 * acknowledged, each named by its log id, so a batch that comes again after a crash files
 * its letters once (within the dead-letter stream's duplicate window).
 */
export class SetAsideLetters {
  private readonly letters: { subject: string; letter: DeadLetter; msgId: string }[] = [];

  constructor(private readonly names: TopologyNames) {}

  add(log: SetAsideLog, err: unknown): void {
    const subject = this.names.deadLetterSubject(letterToken(log.organization_id), letterToken(log.project_id));
    this.letters.push({ subject, letter: setAsideLetter(log, err, subject), msgId: `not-queryable:${log.log_id}` });
  }

  /** Stores every letter, retrying while NATS does not take one; false when `running` turned false first. */
  async store(js: JetStreamClient, running: () => boolean, onError: (err: unknown) => void): Promise<boolean> {
    for (const { subject, letter, msgId } of this.letters) {
      for (;;) {
        try {
          await js.publish(subject, encoder.encode(fitLetter(letter)), { msgID: msgId });
          break;
        } catch (err) {
          if (!running()) return false;
          onError(err);
          await sleep(1_000);
        }
      }
    }
    return true;
  }
}

import type { Freshness, PatientStateClient, StateChanges } from "../../client/index.js";
import type { AtOptions } from "../../client/state.js";
import { str, UsageError, type Io, type Values } from "../command.js";
import { json, table } from "../output.js";

/** The clinical domains of a changes answer, in the order the answer and docs/api.md list them. */
const DOMAINS = ["symptoms", "labs", "medications", "vitals", "devices", "questionnaires", "encounters"] as const satisfies (keyof StateChanges)[];

/** The state read's horizon from --as-of and --known-at (the client's AtOptions); the service checks the instants. */
export function horizonOptions(values: Values): AtOptions {
  const asOf = str(values["as-of"]);
  const knownAt = str(values["known-at"]);
  return { ...(asOf !== undefined ? { asOf } : {}), ...(knownAt !== undefined ? { knownAt } : {}) };
}

/**
 * pss state changes: what changed after --since (up to --until), by domain. A table of
 * items with their log ids (to pass to pss state logs --log-ids), or the answer with --json.
 */
export async function printChanges(c: PatientStateClient, pid: string, values: Values, io: Io): Promise<Partial<Freshness>> {
  const since = str(values.since);
  if (since === undefined) throw new UsageError("changes needs --since T (an ISO 8601 time or a date, such as the last visit's)");
  const until = str(values.until);
  const answer = await c.state.changes(pid, { since, ...(until !== undefined ? { until } : {}) });
  if (values.json) {
    io.out(`${json(answer)}\n`);
    return answer;
  }
  const rows = DOMAINS.flatMap((domain) => answer[domain].map((i) => ({ domain, at: i.at, kind: i.kind, what: i.what, log_ids: i.log_ids.join(",") })));
  io.out(`${answer.summary}\n${rows.length === 0 ? "(no changes)" : table(rows)}\n`);
  return answer;
}

/** pss state diff: the modules and top-level fields that differ between --from and --to (--basis event or known). */
export async function printDiff(c: PatientStateClient, pid: string, values: Values, io: Io): Promise<Partial<Freshness>> {
  const from = str(values.from);
  if (from === undefined) throw new UsageError("diff needs --from T (an ISO 8601 time or a date)");
  const to = str(values.to);
  const basis = str(values.basis);
  if (basis !== undefined && basis !== "event" && basis !== "known") throw new UsageError("--basis must be event or known");
  const answer = await c.state.diff(pid, { from, ...(to !== undefined ? { to } : {}), ...(basis !== undefined ? { basis } : {}) });
  if (values.json) {
    io.out(`${json(answer)}\n`);
    return answer;
  }
  const rows = answer.modules.map((m) => ({ module_type: m.module_type, kind: m.kind, op: m.op, fields: m.fields.map((f) => f.field).join(",") }));
  io.out(`${answer.basis === "known" ? "known_at" : "as_of"} ${answer.from} → ${answer.to}\n${rows.length === 0 ? "(no changes)" : table(rows)}\n`);
  return answer;
}

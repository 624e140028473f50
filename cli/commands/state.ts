import { STABLE_MODULES } from "../../catalog/module-keys.js";
import type { Freshness } from "../../client/index.js";
import type { EventReadOptions } from "../../client/state.js";
import { arg, int, list, noMoreArgs, str, UsageError, type Command, type Io } from "../command.js";
import { json, table } from "../output.js";
import { horizonOptions, printChanges, printDiff } from "./state-changes.js";

const STABLE: ReadonlySet<string> = new Set(STABLE_MODULES);

type EventStatus = NonNullable<EventReadOptions["status"]>;
const EVENT_STATUSES: readonly string[] = ["complete", "applied", "no_change", "pending", "failed"] satisfies EventStatus[];

/** Says on stderr when an answer may miss the caller's own latest writes. */
function warnIfStale(io: Io, answers: Partial<Freshness>[]): void {
  if (answers.some((a) => a.stale === true)) {
    io.err("pss: note: the service's wait for recent writes ran out (x-pss-stale); this state may not include them yet\n");
  }
}

/** The subcommands that read each time option; the service has no such parameter elsewhere. */
const TIME_OPTIONS: Record<string, readonly string[]> = {
  "as-of": ["get", "views", "recent"],
  "known-at": ["get", "views", "recent"],
  "log-ids": ["logs", "events"],
  since: ["logs", "events", "changes"],
  until: ["logs", "events", "changes"],
  from: ["diff"],
  to: ["diff"],
  basis: ["diff"],
};

/** An option the subcommand does not read is a usage error, not dropped: a dropped filter reads as if nothing matched it. */
function refuseOptionsNotOf(sub: string, values: Record<string, unknown>): void {
  for (const [option, subs] of Object.entries(TIME_OPTIONS)) {
    if (values[option] !== undefined && !subs.includes(sub)) throw new UsageError(`--${option} applies to ${subs.map((x) => `state ${x}`).join(", ")}`);
  }
}

export const stateCommand: Command = {
  name: "state",
  summary: "Read a patient's compiled state, then or now, and what changed: pss state get PATIENT",
  help: `Usage: pss state get PATIENT [--module M[,M...]] [--view V [--format raw|markdown]] [--as-of T] [--known-at T]
       pss state views PATIENT [--as-of T] [--known-at T]
       pss state recent PATIENT --view V [--limit N] [--as-of T] [--known-at T]
       pss state memories PATIENT [--query TEXT] [--limit N]
       pss state logs PATIENT [--limit N] [--type T] [--trace-type T] [--trace-id I] [--log-ids ID[,ID...]] [--since T] [--until T] [--cursor C]
       pss state events PATIENT [--limit N] [--type T] [--status S] [--trace-type T] [--trace-id I] [--log-ids ID[,ID...]] [--since T] [--until T] [--cursor C]
       pss state changes PATIENT --since T [--until T]
       pss state diff PATIENT --from T [--to T] [--basis event|known]

get without options prints every stable module and every event-state module with data.
  --module M         Only these modules (stable: demographics, medications, ...;
                     event-state: symptoms, lab_results, vitals, ...)
  --view V           One view (symptom_snapshot, medication_snapshot, ...)
  --format F         raw (JSON, default) or markdown (for --view)
  --as-of T          get, views, recent: the state from the logs whose event time is at
                     or before T, rather than the current state
  --known-at T       ... from the logs the service had accepted by T (not after now)
recent prints the dated entries behind a view --view V, newest first, one line each
(time in the patient's zone). memories prints the patient's memories (memory reports and
conversation summaries), newest first; --query keeps those containing TEXT, any case.
logs and events print one page as a table (--json for the answer, with next_cursor):
logs newest first, events (what each applied log changed) oldest first. --limit N sets
the page size; when there is more, the next page's --cursor is printed on stderr.
  --type T           Only these log types (legacy names work)
  --trace-type T     Only logs (events of logs) whose trace has this object_type
  --trace-id I       ... and this object_id
  --status S         events: complete (all), applied, no_change, pending, failed
  --log-ids ID       Only these logs (events of these logs), at most 100: the log ids a
                     view, a change or a diff names
  --since T, --until T  logs: by event time; events: by when the log was accepted
changes prints what changed after --since (up to --until, default now) by clinical domain,
one line per item with its log ids. diff prints the modules and top-level fields that
differ between the state at --from and at --to (default now); --basis known compares
what the service had accepted by then. Both print the answer with --json.
Times T: an ISO 8601 date-time with an offset (2026-07-01T09:30:00Z) or a date (UTC midnight).

Examples:
  pss state get pat_01J... --module medications
  pss state get pat_01J... --view symptom_snapshot --format markdown
  pss state recent pat_01J... --view symptom_snapshot --limit 5
  pss state logs pat_01J... --trace-type conversation --trace-id conv-1
  pss state get pat_01J... --module symptoms --as-of 2026-07-01
  pss state changes pat_01J... --since 2026-06-01
  pss state logs pat_01J... --log-ids log_01J...,log_01J...`,
  options: {
    module: { type: "string", multiple: true }, view: { type: "string" }, format: { type: "string" }, limit: { type: "string" }, type: { type: "string", multiple: true },
    cursor: { type: "string" }, "trace-type": { type: "string" }, "trace-id": { type: "string" }, status: { type: "string" }, query: { type: "string" },
    "as-of": { type: "string" }, "known-at": { type: "string" }, "log-ids": { type: "string", multiple: true }, since: { type: "string" }, until: { type: "string" },
    from: { type: "string" }, to: { type: "string" }, basis: { type: "string" },
  },
  async run({ args, values, io, client }) {
    const sub = arg(args, 0, "subcommand (get, views, recent, memories, logs, events, changes, diff)");
    const pid = arg(args, 1, "PATIENT (a patient id)");
    noMoreArgs(args, 2, `pss state ${sub} takes one PATIENT`);
    const c = await client();
    const print = (v: unknown) => io.out(`${json(v)}\n`);
    const limit = int(values.limit, "limit");
    const cursor = str(values.cursor);
    const types = list(values.type);
    const traceType = str(values["trace-type"]);
    const traceId = str(values["trace-id"]);
    const status = str(values.status);
    if (status !== undefined && !EVENT_STATUSES.includes(status)) throw new UsageError(`--status must be one of ${EVENT_STATUSES.join(", ")}`);
    refuseOptionsNotOf(sub, values);
    const logIds = list(values["log-ids"]);
    const since = str(values.since);
    const until = str(values.until);
    const at = horizonOptions(values);
    // A table shows one page: say how to get the next, with the same filters, rather than drop next_cursor.
    const more = (next: string | null) => {
      if (!next) return;
      const opts = [
        ...(limit ? [`--limit ${limit}`] : []), ...types.map((t) => `--type ${t}`), ...(status ? [`--status ${status}`] : []),
        ...(traceType !== undefined ? [`--trace-type ${traceType}`] : []), ...(traceId !== undefined ? [`--trace-id ${traceId}`] : []),
        ...(logIds.length > 0 ? [`--log-ids ${logIds.join(",")}`] : []), ...(since !== undefined ? [`--since ${since}`] : []), ...(until !== undefined ? [`--until ${until}`] : []),
      ];
      io.err(`more: pss state ${sub} ${pid}${opts.map((o) => ` ${o}`).join("")} --cursor ${next}\n`);
    };
    switch (sub) {
      case "get":
        break;
      case "changes": {
        warnIfStale(io, [await printChanges(c, pid, values, io)]);
        return 0;
      }
      case "diff": {
        warnIfStale(io, [await printDiff(c, pid, values, io)]);
        return 0;
      }
      case "views": {
        const views = await c.state.views(pid, at);
        warnIfStale(io, [views]);
        print(views);
        return 0;
      }
      case "recent": {
        const view = str(values.view);
        if (view === undefined) throw new UsageError("recent needs --view V (symptom_snapshot, medication_snapshot, ...)");
        const recent = await c.state.recent(pid, view, { ...(limit ? { limit } : {}), ...at });
        warnIfStale(io, [recent]);
        if (values.json) print(recent);
        else io.out(recent.entries.length === 0 ? "(no entries)\n" : `${recent.entries.join("\n")}\n`);
        return 0;
      }
      case "memories": {
        const found = await c.state.memories(pid, { ...(limit ? { limit } : {}), ...(str(values.query) ? { query: str(values.query) } : {}) });
        warnIfStale(io, [found]);
        if (values.json) print(found);
        else io.out(`${table(found.results.map((m) => ({ created_at: m.created_at, type: m.metadata.type, content: m.content, memory_id: m.memory_id })))}\n`);
        return 0;
      }
      case "logs": {
        const page = await c.state.logs(pid, { ...(limit ? { limit } : {}), ...(cursor ? { cursor } : {}), logTypes: types, traceType, traceId, logIds, since, until });
        if (values.json) print(page);
        else {
          io.out(`${table(page.logs.map((l) => ({ id: l.id, type: l.type, timestamp: l.timestamp, trace: l.trace, payload: l.payload })))}\n`);
          more(page.next_cursor);
        }
        return 0;
      }
      case "events": {
        const page = await c.state.events(pid, {
          ...(limit ? { limit } : {}), ...(cursor ? { cursor } : {}), logTypes: types, traceType, traceId, logIds, since, until, ...(status ? { status: status as EventStatus } : {}),
        });
        warnIfStale(io, [page]);
        if (values.json) print(page);
        else {
          io.out(`${table(page.events.map((e) => ({ log_type: e.log_type, status: e.status, triggered_at: e.triggered_at, changes: e.changes.map((x) => x.module_type).join(",") })))}\n`);
          more(page.next_cursor);
        }
        return 0;
      }
      default:
        throw new UsageError(`unknown subcommand state ${sub}`);
    }
    const view = str(values.view);
    const format = str(values.format) ?? "raw";
    if (format !== "raw" && format !== "markdown") throw new UsageError("--format must be raw or markdown");
    if (view !== undefined) {
      if (format === "markdown") io.out(`${(await c.state.view(pid, view, { format: "markdown", ...at })).trimEnd()}\n`);
      else {
        const v = await c.state.view(pid, view, at);
        warnIfStale(io, [v]);
        print(v);
      }
      return 0;
    }
    if (values.format !== undefined) throw new UsageError("--format applies to --view");
    const modules = list(values.module);
    if (modules.length === 0) {
      const [stable, events] = await Promise.all([c.state.stable(pid, at), c.state.eventModules(pid, at)]);
      const payloads = await Promise.all(events.modules.map((m) => c.state.eventModule(pid, m.module_type, at)));
      warnIfStale(io, [stable, events, ...payloads]);
      print({ patient_id: pid, stable: stable.modules, event_modules: Object.fromEntries(payloads.map((m) => [m.module_type, m])) });
      return 0;
    }
    const stableWanted = modules.filter((m) => STABLE.has(m));
    const out: Record<string, unknown> = {};
    const read: Freshness[] = [];
    if (stableWanted.length > 0) {
      const stable = await c.state.stable(pid, { modules: stableWanted, ...at });
      read.push(stable);
      Object.assign(out, stable.modules);
    }
    for (const m of modules.filter((x) => !STABLE.has(x))) read.push((out[m] = await c.state.eventModule(pid, m, at)));
    warnIfStale(io, read);
    // A stable module the patient has no data in is absent from the answer: say so as null.
    for (const m of modules) if (!(m in out)) out[m] = null;
    const [only] = modules;
    print(modules.length === 1 && only !== undefined ? out[only] : { patient_id: pid, modules: out });
    return 0;
  },
};

import { STABLE_MODULES } from "../../catalog/module-keys.js";
import type { Freshness } from "../../client/index.js";
import type { EventReadOptions } from "../../client/state.js";
import { arg, int, list, str, UsageError, type Command, type Io } from "../command.js";
import { json, table } from "../output.js";

const STABLE: ReadonlySet<string> = new Set(STABLE_MODULES);

type EventStatus = NonNullable<EventReadOptions["status"]>;
const EVENT_STATUSES: readonly string[] = ["complete", "applied", "no_change", "pending", "failed"] satisfies EventStatus[];

/** Says on stderr when an answer may miss the caller's own latest writes. */
function warnIfStale(io: Io, answers: Partial<Freshness>[]): void {
  if (answers.some((a) => a.stale === true)) {
    io.err("pss: note: the service's wait for recent writes ran out (x-pss-stale); this state may not include them yet\n");
  }
}

export const stateCommand: Command = {
  name: "state",
  summary: "Read a patient's compiled state: pss state get PATIENT",
  help: `Usage: pss state get PATIENT [--module M[,M...]] [--view V [--format raw|markdown]]
       pss state views PATIENT
       pss state recent PATIENT --view V [--limit N]
       pss state memories PATIENT [--query TEXT] [--limit N]
       pss state logs PATIENT [--limit N] [--type T] [--trace-type T] [--trace-id I] [--cursor C]
       pss state events PATIENT [--limit N] [--type T] [--status S] [--trace-type T] [--trace-id I] [--cursor C]

get without options prints every stable module and every event-state module with data.
  --module M         Only these modules (stable: demographics, medications, ...;
                     event-state: symptoms, lab_results, vitals, ...)
  --view V           One view (symptom_snapshot, medication_snapshot, ...)
  --format F         raw (JSON, default) or markdown (for --view)
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

Examples:
  pss state get pat_01J... --module medications
  pss state get pat_01J... --view symptom_snapshot --format markdown
  pss state recent pat_01J... --view symptom_snapshot --limit 5
  pss state logs pat_01J... --trace-type conversation --trace-id conv-1`,
  options: {
    module: { type: "string", multiple: true }, view: { type: "string" }, format: { type: "string" }, limit: { type: "string" }, type: { type: "string", multiple: true },
    cursor: { type: "string" }, "trace-type": { type: "string" }, "trace-id": { type: "string" }, status: { type: "string" }, query: { type: "string" },
  },
  async run({ args, values, io, client }) {
    const sub = arg(args, 0, "subcommand (get, views, recent, memories, logs, events)");
    const pid = arg(args, 1, "PATIENT (a patient id)");
    const c = await client();
    const print = (v: unknown) => io.out(`${json(v)}\n`);
    const limit = int(values.limit, "limit");
    const cursor = str(values.cursor);
    const types = list(values.type);
    const traceType = str(values["trace-type"]);
    const traceId = str(values["trace-id"]);
    const status = str(values.status);
    if (status !== undefined && !EVENT_STATUSES.includes(status)) throw new UsageError(`--status must be one of ${EVENT_STATUSES.join(", ")}`);
    // A table shows one page: say how to get the next, with the same filters, rather than drop next_cursor.
    const more = (next: string | null) => {
      if (!next) return;
      const opts = [
        ...(limit ? [`--limit ${limit}`] : []), ...types.map((t) => `--type ${t}`), ...(status ? [`--status ${status}`] : []),
        ...(traceType !== undefined ? [`--trace-type ${traceType}`] : []), ...(traceId !== undefined ? [`--trace-id ${traceId}`] : []),
      ];
      io.err(`more: pss state ${sub} ${pid}${opts.map((o) => ` ${o}`).join("")} --cursor ${next}\n`);
    };
    switch (sub) {
      case "get":
        break;
      case "views": {
        const views = await c.state.views(pid);
        warnIfStale(io, [views]);
        print(views);
        return 0;
      }
      case "recent": {
        const view = str(values.view);
        if (view === undefined) throw new UsageError("recent needs --view V (symptom_snapshot, medication_snapshot, ...)");
        const recent = await c.state.recent(pid, view, limit ? { limit } : {});
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
        const page = await c.state.logs(pid, { ...(limit ? { limit } : {}), ...(cursor ? { cursor } : {}), logTypes: types, traceType, traceId });
        if (values.json) print(page);
        else {
          io.out(`${table(page.logs.map((l) => ({ id: l.id, type: l.type, timestamp: l.timestamp, trace: l.trace, payload: l.payload })))}\n`);
          more(page.next_cursor);
        }
        return 0;
      }
      case "events": {
        const page = await c.state.events(pid, {
          ...(limit ? { limit } : {}), ...(cursor ? { cursor } : {}), logTypes: types, traceType, traceId, ...(status ? { status: status as EventStatus } : {}),
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
      if (format === "markdown") io.out(`${(await c.state.view(pid, view, { format: "markdown" })).trimEnd()}\n`);
      else {
        const v = await c.state.view(pid, view);
        warnIfStale(io, [v]);
        print(v);
      }
      return 0;
    }
    if (values.format !== undefined) throw new UsageError("--format applies to --view");
    const modules = list(values.module);
    if (modules.length === 0) {
      const [stable, events] = await Promise.all([c.state.stable(pid), c.state.eventModules(pid)]);
      const payloads = await Promise.all(events.modules.map((m) => c.state.eventModule(pid, m.module_type)));
      warnIfStale(io, [stable, events, ...payloads]);
      print({ patient_id: pid, stable: stable.modules, event_modules: Object.fromEntries(payloads.map((m) => [m.module_type, m])) });
      return 0;
    }
    const stableWanted = modules.filter((m) => STABLE.has(m));
    const out: Record<string, unknown> = {};
    const read: Freshness[] = [];
    if (stableWanted.length > 0) {
      const stable = await c.state.stable(pid, { modules: stableWanted });
      read.push(stable);
      Object.assign(out, stable.modules);
    }
    for (const m of modules.filter((x) => !STABLE.has(x))) read.push((out[m] = await c.state.eventModule(pid, m)));
    warnIfStale(io, read);
    // A stable module the patient has no data in is absent from the answer: say so as null.
    for (const m of modules) if (!(m in out)) out[m] = null;
    const [only] = modules;
    print(modules.length === 1 && only !== undefined ? out[only] : { patient_id: pid, modules: out });
    return 0;
  },
};

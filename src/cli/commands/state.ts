import { STABLE_MODULES } from "../../../readmodels/module.js";
import type { Freshness } from "../../client/index.js";
import { arg, int, list, str, UsageError, type Command, type Io } from "../command.js";
import { json, table } from "../output.js";

const STABLE: ReadonlySet<string> = new Set(STABLE_MODULES);

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
       pss state logs PATIENT [--limit N] [--type T] [--cursor C]
       pss state events PATIENT [--limit N] [--cursor C]

get without options prints every stable module and every event-state module with data.
  --module M         Only these modules (stable: demographics, medications, ...;
                     event-state: symptoms, lab_results, vitals, ...)
  --view V           One view (symptom_snapshot, medication_snapshot, ...)
  --format F         raw (JSON, default) or markdown (for --view)
logs and events print one page as a table (--json for the answer, with next_cursor):
logs newest first, events (what each applied log changed) oldest first. --limit N sets
the page size; when there is more, the next page's --cursor is printed on stderr.

Examples:
  pss state get pat_01J... --module medications
  pss state get pat_01J... --view symptom_snapshot --format markdown`,
  options: {
    module: { type: "string", multiple: true }, view: { type: "string" }, format: { type: "string" }, limit: { type: "string" }, type: { type: "string", multiple: true },
    cursor: { type: "string" },
  },
  async run({ args, values, io, client }) {
    const sub = arg(args, 0, "subcommand (get, views, logs, events)");
    const pid = arg(args, 1, "PATIENT (a patient id)");
    const c = await client();
    const print = (v: unknown) => io.out(`${json(v)}\n`);
    const limit = int(values.limit, "limit");
    const cursor = str(values.cursor);
    // A table shows one page: say how to get the next, rather than drop next_cursor.
    const more = (next: string | null) => {
      if (next) io.err(`more: pss state ${sub} ${pid}${limit ? ` --limit ${limit}` : ""}${sub === "logs" ? list(values.type).map((t) => ` --type ${t}`).join("") : ""} --cursor ${next}\n`);
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
      case "logs": {
        const page = await c.state.logs(pid, { ...(limit ? { limit } : {}), ...(cursor ? { cursor } : {}), logTypes: list(values.type) });
        if (values.json) print(page);
        else {
          io.out(`${table(page.logs.map((l) => ({ id: l.id, type: l.type, timestamp: l.timestamp, trace: l.trace, payload: l.payload })))}\n`);
          more(page.next_cursor);
        }
        return 0;
      }
      case "events": {
        const page = await c.state.events(pid, { ...(limit ? { limit } : {}), ...(cursor ? { cursor } : {}) });
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
    print(modules.length === 1 ? out[modules[0]!] : { patient_id: pid, modules: out });
    return 0;
  },
};

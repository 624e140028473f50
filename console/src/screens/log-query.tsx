import { useEffect, useMemo, useState } from "preact/hooks";
import { api, session } from "../lib/api.js";
import { pssQueryCommand } from "../lib/pss-command.js";
import { AGG_OPS, cellText, columnsOf, emptyForm, FILTER_OPS, queryBody, toCsv, type AggOp, type FilterOp, type QueryForm } from "../lib/log-query.js";
import type { LogQueryAnswer } from "../../../client/types.js";

const input = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement | HTMLSelectElement).value);

/** Extra conditions, one row each: field, operator, value. */
function Conditions({ form, set }: { form: QueryForm; set: (f: QueryForm) => void }) {
  const change = (i: number, patch: Partial<QueryForm["conditions"][number]>) => set({ ...form, conditions: form.conditions.map((c, j) => (j === i ? { ...c, ...patch } : c)) });
  return (
    <fieldset>
      <legend>Conditions</legend>
      {form.conditions.map((c, i) => (
        <div class="row" key={i}>
          <label>Field {i + 1} <input value={c.field} placeholder="payload.symptoms.0.score" onInput={input((v) => change(i, { field: v }))} /></label>
          <label>Operator {i + 1} <select value={c.op} onChange={input((v) => change(i, { op: v as FilterOp }))}>{FILTER_OPS.map((o) => <option key={o}>{o}</option>)}</select></label>
          <label>Value {i + 1} <input value={c.value} onInput={input((v) => change(i, { value: v }))} /></label>
          <button type="button" onClick={() => set({ ...form, conditions: form.conditions.filter((_, j) => j !== i) })}>Remove condition {i + 1}</button>
        </div>
      ))}
      <button type="button" onClick={() => set({ ...form, conditions: [...form.conditions, { field: "", op: "eq", value: "" }] })}>Add condition</button>
    </fieldset>
  );
}

/** Group-by fields and the aggregations computed per group. */
function Grouping({ form, set }: { form: QueryForm; set: (f: QueryForm) => void }) {
  const change = (i: number, patch: Partial<QueryForm["aggregations"][number]>) => set({ ...form, aggregations: form.aggregations.map((a, j) => (j === i ? { ...a, ...patch } : a)) });
  return (
    <fieldset>
      <legend>Grouping</legend>
      <label>Group by (fields, comma-separated) <input value={form.groupBy} placeholder="type" onInput={input((v) => set({ ...form, groupBy: v }))} /></label>
      {form.aggregations.map((a, i) => (
        <div class="row" key={i}>
          <label>Aggregation {i + 1} <select value={a.op} onChange={input((v) => change(i, { op: v as AggOp }))}>{AGG_OPS.map((o) => <option key={o}>{o}</option>)}</select></label>
          <label>Of field {i + 1} <input value={a.field} placeholder="(none for count)" onInput={input((v) => change(i, { field: v }))} /></label>
          <label>As {i + 1} <input value={a.alias} onInput={input((v) => change(i, { alias: v }))} /></label>
          <button type="button" onClick={() => set({ ...form, aggregations: form.aggregations.filter((_, j) => j !== i) })}>Remove aggregation {i + 1}</button>
        </div>
      ))}
      <button type="button" onClick={() => set({ ...form, aggregations: [...form.aggregations, { op: "count", field: "", alias: `n${form.aggregations.length || ""}` }] })}>Add aggregation</button>
    </fieldset>
  );
}

/** The answer's rows as a table, with a CSV of them to download. */
function Result({ answer }: { answer: LogQueryAnswer }) {
  const rows = answer.rows ?? [];
  const columns = columnsOf(rows);
  const csv = useMemo(() => URL.createObjectURL(new Blob([toCsv(columns, rows)], { type: "text/csv" })), [answer]);
  useEffect(() => () => URL.revokeObjectURL(csv), [csv]);
  return (
    <section aria-labelledby="result">
      <h2 id="result">Result</h2>
      <p aria-live="polite">{answer.count} rows{answer.has_more ? " (more match: raise the limit)" : ""}</p>
      {rows.length > 0 && <p><a href={csv} download="logs.csv">Download CSV</a></p>}
      <table aria-label="Query result">
        <thead><tr>{columns.map((c) => <th scope="col" key={c}>{c}</th>)}</tr></thead>
        <tbody>
          {rows.map((r, i) => <tr key={i}>{columns.map((c) => <td key={c}>{cellText((r as Record<string, unknown>)[c])}</td>)}</tr>)}
        </tbody>
      </table>
    </section>
  );
}

/** The `pss query` command that asks the same, with a button that copies it. */
function CliCommand({ command }: { command: string }) {
  const [copied, setCopied] = useState<string | null>(null);
  // navigator.clipboard is absent outside a secure context (plain http but to localhost).
  const write = () => ("clipboard" in navigator && navigator.clipboard ? navigator.clipboard.writeText(command) : Promise.reject(new Error("no clipboard")));
  const copy = () => write().then(() => setCopied("Copied."), () => setCopied("Copying is not allowed here: select the command and copy it."));
  useEffect(() => setCopied(null), [command]);
  return (
    <>
      <h2 id="cli-command">Equivalent <code>pss</code> command</h2>
      <div class="command">
        <pre aria-labelledby="cli-command" class="cli">{command}</pre>
        <button type="button" aria-label="Copy the pss command" onClick={() => void copy()}>Copy</button>
        <span role="status">{copied}</span>
      </div>
    </>
  );
}

/** Logs across the project (or a cohort): filters, grouping and aggregations, as POST /v1/state/logs/query takes them. */
export function LogQuery() {
  const [form, setForm] = useState<QueryForm>(emptyForm);
  const [answer, setAnswer] = useState<LogQueryAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const body = queryBody(form);
  const run = () => {
    setBusy(true);
    setError(null);
    api<LogQueryAnswer>("POST", "/v1/state/logs/query", { body })
      .then(setAnswer, (e: Error) => setError(e.message))
      .finally(() => setBusy(false));
  };
  return (
    <main>
      <h1>Log query</h1>
      <form
        class="query"
        onSubmit={(e) => {
          e.preventDefault();
          run();
        }}
      >
        <div class="row">
          <label>Log type <input value={form.logType} placeholder="symptom_report" onInput={input((v) => setForm({ ...form, logType: v }))} /></label>
          <label>Patient ids (comma-separated) <input value={form.patientIds} onInput={input((v) => setForm({ ...form, patientIds: v }))} /></label>
        </div>
        <div class="row">
          <label>From (timestamp, inclusive) <input value={form.since} placeholder="2026-01-01T00:00:00Z" onInput={input((v) => setForm({ ...form, since: v }))} /></label>
          <label>Until (exclusive) <input value={form.until} onInput={input((v) => setForm({ ...form, until: v }))} /></label>
          <label>Limit <input type="number" min={1} max={1000} value={form.limit} onInput={input((v) => setForm({ ...form, limit: v }))} /></label>
        </div>
        <Conditions form={form} set={setForm} />
        <Grouping form={form} set={setForm} />
        <button type="submit" disabled={busy}>Run query</button>
      </form>
      <h2 id="json-body">Equivalent JSON body</h2>
      <pre aria-labelledby="json-body" class="json">{JSON.stringify(body, null, 2)}</pre>
      <CliCommand command={pssQueryCommand(body, { url: location.origin, project: session.project() })} />
      {error && <p role="alert" class="error">{error}</p>}
      {answer && <Result answer={answer} />}
    </main>
  );
}

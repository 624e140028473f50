/**
 * The questions an agent asks of one patient, each answered by ONE MCP call, and what each
 * answer costs a model: bytes and tokens of the text the call hands back (a tool's content
 * text, a prompt's message texts). Seeds one realistic patient through POST /v1/logs/batch,
 * anchored on today so the views' "last 7 days" hold data:
 *
 * - profile: name, date of birth, an MRN, timezone Europe/London;
 * - 8 weeks of ESAS-r reports twice a day (08:00, 20:00), nine symptoms each, pain first;
 * - 14 days of CGM every 15 minutes (cgm_reading), with post-meal highs and a few night lows;
 * - a year of monthly lab panels, 25 tests (a metabolic panel, lipids, blood count, TSH,
 *   urine albumin and HbA1c, LOINC 4548-4, trending down then up again);
 * - four medications with schedule_times, a dose change at the visit, and 14 days of
 *   medication_adherence with some doses skipped and some never reported;
 * - home blood pressure twice a week, clinic vitals at the visit;
 * - PHQ-9 six weeks ago and three days ago;
 * - the last visit 14 days ago: care_encounter, clinical_note, clinical_plan_item.
 *
 * Then asks each question through the SDK's client over streamable HTTP and prints a
 * markdown table: question | call | answer bytes | answer tokens (js-tiktoken, o200k_base;
 * cl100k_base with --encoding cl100k_base). The tools' own list (tools/list) is measured too,
 * since a model reads it before any call.
 *
 * Against a running service (a key with mcp:patient-state, api:manage-patients,
 * sdk:event-log and sdk:state-read, such as the bootstrap key):
 *
 *   PSS_URL=http://127.0.0.1:8080 PSS_API_KEY=$(cat data/admin-key) npm run bench:agent-questions
 *
 * Without PSS_URL it starts the service as `npm start` runs it, in a namespace of its own,
 * and stops it afterwards. `--show` also prints every answer in full.
 */
import { randomBytes } from "node:crypto";
import { getEncoding, type TiktokenEncoding } from "js-tiktoken";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startService, type ServiceUnderTest } from "./support.js";

const flag = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const encodingName = (flag("encoding") ?? "o200k_base") as TiktokenEncoding;
const show = process.argv.includes("--show");
const enc = getEncoding(encodingName);

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** Today's UTC midnight: the patient's zone (Europe/London) is UTC in winter, an hour ahead in summer. */
const TODAY = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
const NOW = Date.now();
const iso = (ms: number) => new Date(ms).toISOString();
/** `days` before today's midnight, at hh:mm UTC. */
const at = (days: number, hh = 8, mm = 0) => TODAY - days * DAY + (hh * 60 + mm) * MIN;
const dateOf = (ms: number) => iso(ms).slice(0, 10);
/** Deterministic noise in [0, 1). */
const noise = (n: number) => {
  const x = Math.sin(n * 12.9898) * 43_758.5453;
  return x - Math.floor(x);
};

const VISIT = at(14, 10);
const MRN = `MRN-${randomBytes(3).toString("hex").toUpperCase()}`;

let svc: ServiceUnderTest | undefined;
let url = process.env.PSS_URL ?? flag("url");
let key = process.env.PSS_API_KEY ?? flag("key");
if (!url) {
  svc = await startService({ PSS_VIEW_DEBOUNCE_MS: "10" }, 8);
  url = svc.url;
  key = svc.adminKey;
}
if (!key) throw new Error("PSS_API_KEY (or --key) is needed with PSS_URL");
url = url.replace(/\/$/, "");
const auth = { authorization: `Bearer ${key}` };

async function rest(method: "GET" | "POST", path: string, body?: unknown): Promise<any> {
  const r = await fetch(`${url}${path}`, { method, headers: { ...auth, ...(body === undefined ? {} : { "content-type": "application/json" }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 800)}`);
  return text ? JSON.parse(text) : undefined;
}

const client = new Client({ name: "agent-questions", version: "1.0.0" });
try {
  // --- The patient --------------------------------------------------------------------
  const patient = await rest("POST", "/v1/patients", {
    first_name: "Margaret", last_name: "Okafor", date_of_birth: "1958-04-12", timezone: "Europe/London",
    external_identifiers: [{ system: "urn:mrn:st-marys", value: MRN }],
  });
  const pid: string = patient.id;
  const logs: Record<string, unknown>[] = [];
  const log = (log_type: string, ms: number, payload: Record<string, unknown>) => {
    if (ms <= NOW) logs.push({ log_type, patient_id: pid, timestamp: iso(ms), payload, idempotency_key: `${pid}-${logs.length}` });
  };

  log("demographics", at(400), { name: "Margaret Okafor", dob: "1958-04-12", sex: "female" });
  log("condition", at(400), { conditions: [
    { disease_type: "Type 2 diabetes mellitus", icd10_codes: ["E11.9"], clinical_status: "active", onset_date: "2014-06-01" },
    { disease_type: "Essential hypertension", icd10_codes: ["I10"], clinical_status: "active" },
    { disease_type: "Osteoarthritis of knee", icd10_codes: ["M17.9"], clinical_status: "active" },
  ] });

  // ESAS-r, twice a day for 8 weeks. Pain rises after the visit (3-4 → 6-7), tiredness stays, nausea fades.
  const ESAS = ["pain", "tiredness", "drowsiness", "nausea", "appetite", "shortness_of_breath", "depression", "anxiety", "wellbeing"];
  for (let d = 55; d >= 0; d--) {
    for (const hh of [8, 20]) {
      const n = d * 2 + (hh === 20 ? 1 : 0);
      const after = d < 14;
      const base: Record<string, number> = {
        pain: after ? 6 + (d < 5 ? 1 : 0) : 3 + (n % 2), tiredness: 4 + (n % 3 === 0 ? 1 : 0), drowsiness: 2, nausea: after ? 0 : 3,
        appetite: 2 + (n % 2), shortness_of_breath: 1, depression: d < 7 ? 5 : 3, anxiety: d < 7 ? 4 : 2, wellbeing: after ? 5 : 3,
      };
      log("symptom_report", at(d, hh, 5), { instrument: "esas_r", symptoms: ESAS.map((name) => ({ name, score: Math.min(10, base[name]! + (noise(n * 7 + name.length) < 0.2 ? 1 : 0)) })) });
    }
  }

  // CGM every 15 minutes for 14 days: highs after meals, a few lows at night.
  for (let t = at(14, 0); t <= NOW; t += 15 * MIN) {
    const h = ((t % DAY) / HOUR + 24) % 24;
    const meal = [7.5, 12.5, 18.5].reduce((s, m) => s + (h >= m && h < m + 3 ? 110 * Math.sin(((h - m) / 3) * Math.PI) : 0), 0);
    const night = h >= 2 && h < 4 && noise(Math.floor(t / DAY)) < 0.3 ? -65 : 0;
    const v = Math.round(125 + meal + night + (noise(t / MIN) - 0.5) * 30);
    log("cgm_reading", t, { glucose_mg_dl: v, sensor_timestamp: iso(t), trend_arrow: "flat", device_provider: "dexcom" });
  }

  // A year of monthly panels, 25 tests; the last one 5 days ago.
  const TESTS: [string, string, string, number, number | undefined, number | undefined][] = [
    ["4548-4", "Hemoglobin A1c", "%", 0, 4, 5.6],
    ["2345-7", "Glucose", "mg/dL", 150, 70, 99],
    ["2160-0", "Creatinine", "mg/dL", 1.0, 0.6, 1.1],
    ["3094-0", "Urea nitrogen", "mg/dL", 16, 7, 20],
    ["2951-2", "Sodium", "mmol/L", 139, 135, 145],
    ["2823-3", "Potassium", "mmol/L", 4.4, 3.5, 5.1],
    ["2075-0", "Chloride", "mmol/L", 102, 98, 107],
    ["2028-9", "Carbon dioxide", "mmol/L", 25, 22, 29],
    ["17861-6", "Calcium", "mg/dL", 9.4, 8.6, 10.3],
    ["2885-2", "Protein", "g/dL", 7.1, 6.0, 8.3],
    ["1751-7", "Albumin", "g/dL", 4.1, 3.5, 5.0],
    ["1975-2", "Bilirubin total", "mg/dL", 0.6, 0.1, 1.2],
    ["6768-6", "Alkaline phosphatase", "U/L", 82, 44, 147],
    ["1742-6", "ALT", "U/L", 24, 7, 56],
    ["1920-8", "AST", "U/L", 22, 10, 40],
    ["33914-3", "eGFR", "mL/min/1.73m2", 68, 60, undefined],
    ["2093-3", "Cholesterol total", "mg/dL", 188, undefined, 200],
    ["2085-9", "HDL cholesterol", "mg/dL", 52, 40, undefined],
    ["13457-7", "LDL cholesterol (calculated)", "mg/dL", 104, undefined, 100],
    ["2571-8", "Triglycerides", "mg/dL", 160, undefined, 150],
    ["718-7", "Hemoglobin", "g/dL", 13.1, 12.0, 15.5],
    ["6690-2", "Leukocytes", "10*3/uL", 6.8, 4.5, 11.0],
    ["777-3", "Platelets", "10*3/uL", 240, 150, 400],
    ["14959-1", "Microalbumin/creatinine ratio", "mg/g", 24, undefined, 30],
    ["3016-3", "TSH", "mIU/L", 2.1, 0.4, 4.0],
  ];
  const A1C = [7.9, 7.8, 7.6, 7.4, 7.2, 7.1, 7.0, 7.0, 7.1, 7.3, 7.5, 7.6];
  for (let m = 0; m < 12; m++) {
    const when = at(5 + (11 - m) * 30, 7, 30);
    log("lab_results", when, {
      results: TESTS.map(([loinc_code, test_name, unit, typical, low, high], i) => {
        const value = i === 0 ? A1C[m]! : +(typical * (1 + (noise(m * 31 + i) - 0.5) * 0.12)).toFixed(typical < 10 ? 1 : 0);
        const flag = (low !== undefined && value < low) ? "L" : (high !== undefined && value > high) ? "H" : undefined;
        return { loinc_code, test_name, value_numeric: value, unit, ...(low !== undefined ? { reference_range_low: low } : {}), ...(high !== undefined ? { reference_range_high: high } : {}), ...(flag ? { abnormal_flag: flag } : {}) };
      }),
    });
  }

  // Medications, on the list since 10 weeks ago; metformin's dose raised at the visit.
  log("medication_list_update", at(70, 9), { medications: [
    { action: "add", medication_name: "Metformin", rxnorm_cui: "860975", dose: "500 mg", frequency: "BID", schedule_times: ["08:00", "20:00"] },
    { action: "add", medication_name: "Lisinopril", rxnorm_cui: "314076", dose: "10 mg", frequency: "QD", schedule_times: ["08:00"] },
    { action: "add", medication_name: "Atorvastatin", rxnorm_cui: "617310", dose: "20 mg", frequency: "QD", schedule_times: ["20:00"] },
    { action: "add", medication_name: "Paracetamol", rxnorm_cui: "313782", dose: "1 g", frequency: "PRN" },
  ] });
  log("medication_list_update", VISIT + 30 * MIN, { medications: [{ action: "update", medication_name: "Metformin", rxnorm_cui: "860975", dose: "1000 mg" }] });
  // 14 days of doses: most taken a few minutes late, some skipped, some never reported.
  const SCHEDULE: [string, number][] = [["860975", 8], ["314076", 8], ["860975", 20], ["617310", 20]];
  for (let d = 13; d >= 0; d--) {
    for (const [rxnorm_cui, hh] of SCHEDULE) {
      const due = at(d, hh);
      const r = noise(d * 13 + hh + Number(rxnorm_cui) % 97);
      if (r < 0.08) continue; // never reported
      const skipped = (d === 2 && hh === 20 && rxnorm_cui === "860975") || (d === 4 && rxnorm_cui === "617310") || r > 0.94;
      log("medication_adherence", due + (5 + Math.floor(r * 20)) * MIN, { medication_adherence: [{ status: skipped ? "skipped" : "taken", rxnorm_cui, scheduled_time: iso(due) }] });
    }
  }

  // Home blood pressure twice a week for 8 weeks; clinic vitals at the visit.
  for (let d = 55; d >= 0; d -= 3.5) {
    const day = Math.floor(d);
    log("vitals_measurement", at(day, 7, 45), { measurements: { systolic_bp_mmhg: 138 + Math.round(noise(day) * 14), diastolic_bp_mmhg: 84 + Math.round(noise(day + 1) * 8), heart_rate_bpm: 72 + Math.round(noise(day + 2) * 10) }, context: { position: "sitting" }, source: "home", collection_datetime: iso(at(day, 7, 45)) });
  }
  log("vitals_measurement", VISIT - 20 * MIN, { measurements: { systolic_bp_mmhg: 146, diastolic_bp_mmhg: 88, heart_rate_bpm: 78, weight_kg: 84.2, temperature_celsius: 36.7, spo2_percent: 97, respiratory_rate_bpm: 16 }, context: { position: "sitting" }, source: "clinic", collection_datetime: iso(VISIT - 20 * MIN) });

  // PHQ-9 six weeks ago and three days ago.
  const phq = (ms: number, total: number, severity: string, item9: number, extra: Record<string, unknown> = {}) =>
    log("questionnaire_response", ms, { instrument: { instrument_id: "PHQ-9", instrument_type: "validated" }, administration: { administration_mode: "patient_self_report" }, item_responses: [{ item_number: 9, question: "Thoughts that you would be better off dead", response_value: item9 }], scores: { total_score: total, total_score_max: 27, severity_category: severity }, ...extra });
  phq(at(42, 11), 7, "mild", 0);
  phq(at(3, 11), 13, "moderate", 0, { change: { change_classification: "worsened", minimally_important_difference: 5 } });

  // The last visit.
  log("care_encounter", VISIT, { encounter_id: "enc-2291", status: "finished", encounter_class: "ambulatory", encounter_type: "follow_up", reason: "Diabetes and knee pain review", period: { start_datetime: iso(VISIT), end_datetime: iso(VISIT + 25 * MIN) } });
  log("clinical_note", VISIT + 40 * MIN, { note_type: "progress_note", source: "ehr", encounter_id: "enc-2291", sections: [
    { section_label: "Assessment", content: "HbA1c creeping up again (7.5 %). Knee pain limiting walking. Mood low but no risk." },
    { section_label: "Plan", content: "Metformin 500 mg → 1000 mg BID. Paracetamol as needed for the knee. Repeat HbA1c and renal panel in 4 weeks; PHQ-9 at next visit." },
  ] });
  log("clinical_plan_item", VISIT + 45 * MIN, { plan_item_id: "pi-2291-1", item_type: "lab", description: "Repeat HbA1c and renal panel", status: "scheduled", scheduled_date: dateOf(VISIT + 28 * DAY), encounter_id: "enc-2291" });

  // --- Send ---------------------------------------------------------------------------
  let accepted = 0;
  for (let i = 0; i < logs.length; i += 500) {
    const r = await rest("POST", "/v1/logs/batch", { logs: logs.slice(i, i + 500) });
    if (r.failed > 0) throw new Error(`seeding failed: ${JSON.stringify(r.errors ?? r).slice(0, 1200)}`);
    accepted += r.accepted;
  }
  const types = logs.reduce<Record<string, number>>((m, l) => ({ ...m, [l.log_type as string]: (m[l.log_type as string] ?? 0) + 1 }), {});
  console.error(`seeded ${accepted} logs for ${pid} (${MRN}): ${Object.entries(types).map(([k, v]) => `${k} ${v}`).join(", ")}`);

  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: auth } }));

  // query_logs reads ClickHouse, which the projector fills behind the write: wait for it.
  for (let i = 0; ; i++) {
    const r = await client.callTool({ name: "query_logs", arguments: { patient_ids: [pid], count: true } }) as { content: { text: string }[] };
    const n = (JSON.parse(r.content[0]!.text) as { count?: number }).count;
    if (n === accepted) break;
    if (i > 600) throw new Error(`ClickHouse holds ${n} of ${accepted} logs after 60 s`);
    await new Promise((res) => setTimeout(res, 100));
  }
  // Views render after a pause in a patient's logs; the reads wait for applied logs, not renders.
  await new Promise((res) => setTimeout(res, 2_000));

  // --- Ask ----------------------------------------------------------------------------
  interface Row { question: string; call: string; bytes: number; tokens: number; note: string }
  const rows: Row[] = [];
  const measure = (question: string, call: string, text: string, note: string) => {
    rows.push({ question, call, bytes: Buffer.byteLength(text), tokens: enc.encode(text).length, note });
    if (show) console.log(`\n===== ${question}\n${call}\n${text}\n`);
  };
  const short = (args: Record<string, unknown>) => JSON.stringify(args).replace(pid, "<pid>");
  const tool = async (question: string, name: string, args: Record<string, unknown>) => {
    const r = await client.callTool({ name, arguments: { patient_id: pid, ...args } }) as { isError?: boolean; content: { type: string; text?: string }[]; _meta?: Record<string, unknown> };
    const text = r.content.map((c) => c.text ?? "").join("\n");
    const notes = [r.isError ? `**tool error**: ${text.slice(0, 200)}` : "", r._meta?.["pss/stale"] ? "stale" : "", /"truncated":true/.test(text) ? "truncated" : ""].filter(Boolean);
    measure(question, `\`${name}\` \`${short(args)}\``, text, notes.join("; "));
    return text;
  };
  const projectTool = async (question: string, name: string, args: Record<string, unknown>) => {
    const r = await client.callTool({ name, arguments: args }) as { isError?: boolean; content: { text?: string }[] };
    const text = r.content.map((c) => c.text ?? "").join("\n");
    measure(question, `\`${name}\` \`${short(args)}\``, text, r.isError ? `**tool error**: ${text.slice(0, 200)}` : /"truncated":true/.test(text) ? "truncated" : "");
    return text;
  };
  const prompt = async (question: string, name: string, args: Record<string, string>) => {
    const r = await client.getPrompt({ name, arguments: { patient_id: pid, ...args } });
    const text = r.messages.map((m) => (m.content.type === "text" ? m.content.text : JSON.stringify(m.content))).join("\n");
    measure(question, `prompt \`${name}\` \`${short(args)}\``, text, `${r.messages.length} message${r.messages.length === 1 ? "" : "s"}`);
    return text;
  };

  const listed = await client.listTools();
  const toolsText = JSON.stringify(listed.tools);

  const visitDay = dateOf(VISIT);
  await tool("What changed since the last visit?", "get_changes", { since: iso(VISIT) });
  await tool("Time in range over 14 days?", "get_view_block", { view_type: "device_snapshot", block_id: "glucose_14_days" });
  await tool("(The glucose module since 13 days ago, for the daily detail)", "get_event_state_module", { module_type: "glucose", since: dateOf(at(13)) });
  await tool("How is the patient's HbA1c trending?", "get_event_state_module", { module_type: "lab_results", entities: ["4548-4"] });
  await tool("Which doses were missed this week?", "get_view_block", { view_type: "medication_snapshot", block_id: "missed_doses" });
  await tool("What is the current symptom picture?", "get_view", { view_type: "symptom_snapshot", format: "markdown" });
  await tool("What was the state on the day of the visit?", "get_view", { view_type: "symptom_snapshot", format: "markdown", as_of: `${visitDay}T23:59:59Z` });
  await projectTool("Average pain score per week over two months?", "query_logs", {
    patient_ids: [pid],
    filter: [{ field: "type", op: "eq", value: "symptom_report" }, { field: "timestamp", op: "gte", value: dateOf(at(55)) }],
    select: [{ path: "timestamp" }, { path: "payload.symptoms", where: { field: "name", op: "eq", value: "pain" }, element: "score", first: true, alias: "pain" }],
    order: [{ field: "timestamp" }],
    limit: 200,
  });
  await projectTool("(Average pain over the two months, one number)", "query_logs", {
    patient_ids: [pid],
    filter: [{ field: "type", op: "eq", value: "symptom_report" }, { field: "timestamp", op: "gte", value: dateOf(at(55)) }, { field: "payload.symptoms.0.name", op: "eq", value: "pain" }],
    aggregations: [{ op: "avg", field: "payload.symptoms.0.score", alias: "avg_pain" }, { op: "count", alias: "reports" }],
  });
  await projectTool("Find the patient by MRN", "find_patient", { identifier_value: MRN });
  await prompt("Prepare for the visit", "visit_prep_summary", {});
  await prompt("Alert the clinician", "provider_alert", {});

  // --- Print --------------------------------------------------------------------------
  const cell = (s: string) => s.replace(/\|/g, "\\|");
  console.log(`Patient ${MRN}: ${accepted} logs; read ${iso(NOW).slice(0, 16)}Z; tokens: js-tiktoken ${encodingName}.\n`);
  console.log("| Question | The call | Answer bytes | Answer tokens | Note |");
  console.log("|---|---|---:|---:|---|");
  for (const r of rows) console.log(`| ${cell(r.question)} | ${cell(r.call)} | ${r.bytes.toLocaleString("en-US")} | ${r.tokens.toLocaleString("en-US")} | ${cell(r.note)} |`);
  console.log(`\ntools/list (${listed.tools.length} tools, read by the model before any call): ${Buffer.byteLength(toolsText).toLocaleString("en-US")} bytes, ${enc.encode(toolsText).length.toLocaleString("en-US")} tokens.`);
} finally {
  await client.close().catch(() => undefined);
  if (svc) {
    await svc.stop();
    const { connect } = await import("@nats-io/transport-node");
    const { destroyTopology } = await import("../infra/nats/topology.js");
    const nc = await connect({ servers: process.env.NATS_URL ?? "127.0.0.1:4222" });
    await destroyTopology(nc, svc.namespace);
    await nc.close();
  }
}

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
let client: Client;
let pid: string;
let big: string;
let ids: string[];

const text = (r: { contents: unknown[] }) => (r.contents[0] as { text: string }).text;
const promptText = (p: { messages: { content: unknown }[] }) => (p.messages[0]!.content as { text: string }).text;
async function call(name: string, args: Record<string, unknown>) {
  const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { text: string }[] };
  return { isError: r.isError === true, text: r.content[0]!.text, json: JSON.parse(r.content[0]!.text) };
}

beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  const url = new URL(`http://127.0.0.1:${(t.app.server.address() as { port: number }).port}/mcp`);
  const create = async () => (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id as string;
  pid = await create();
  big = await create();
  const logs = [
    { log_type: "symptom_report", patient_id: pid, timestamp: "2026-07-03T08:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 9 }] } },
    { log_type: "lab_results", patient_id: pid, timestamp: "2026-07-02T07:00:00Z", payload: { results: [{ loinc_code: "2823-3", test_name: "Potassium", value_numeric: 6.9, unit: "mmol/L", abnormal_flag: "HH" }] } },
    { log_type: "lab_results", patient_id: pid, timestamp: "2026-06-01T07:00:00Z", payload: { results: [{ loinc_code: "2345-7", test_name: "Glucose", value_numeric: 180, unit: "mg/dL", abnormal_flag: "H" }] } },
    { log_type: "medication_adherence", patient_id: pid, timestamp: "2026-07-02T08:30:00Z", payload: { medication_adherence: [{ status: "skipped", medication_name: "Metformin", scheduled_time: "2026-07-02T08:00:00Z" }] } },
    { log_type: "symptom_detail", patient_id: pid, timestamp: "2026-07-03T09:00:00Z", payload: { symptom_type: "headache", detail_type: "location", response: "behind the eyes" } },
    { log_type: "demographics", patient_id: pid, timestamp: "2026-07-01T00:00:00Z", payload: { name: "Ada Example", dob: "1960-02-03" } },
  ];
  // 40 notes of about 2 kB each: far over any answer's budget.
  const note = "The pain wakes me at night and moves from the lower back to the left leg. ".repeat(27);
  for (let i = 0; i < 40; i++) {
    logs.push({ log_type: "symptom_free_text", patient_id: big, timestamp: new Date(Date.UTC(2026, 6, 1, 0, i)).toISOString(), payload: { text: `${i}: ${note}` } } as never);
  }
  const r = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).json();
  expect(r.accepted, JSON.stringify(r.errors)).toBe(logs.length);
  ids = r.results.map((x: { id: string }) => x.id);
  client = new Client({ name: "pss-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${t.adminKey}` } } }));
});
afterAll(async () => {
  await client?.close();
  await t?.close();
});

describe("MCP resources", () => {
  it("lists organization resources and the patient templates for an API key", async () => {
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(["org://log-types", "org://projects/current"]);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate).sort()).toEqual([
      "patient://{patient_id}/event-modules/{module_type}", "patient://{patient_id}/stable", "patient://{patient_id}/views/{view_type}",
    ]);
  });

  it("reads the project and the log-type catalog (under 50 kB)", async () => {
    expect(JSON.parse(text(await client.readResource({ uri: "org://projects/current" })))).toMatchObject({ id: "prj_default", slug: "default", name: expect.any(String) });
    const catalog = text(await client.readResource({ uri: "org://log-types" }));
    expect(catalog.length).toBeLessThan(50_000);
    const types = JSON.parse(catalog).log_types;
    expect(types).toHaveLength(55);
    expect(types.find((x: any) => x.log_type === "symptom_report")).toMatchObject({ group: "symptom", lifecycle_tracked: true, required: expect.arrayContaining(["symptoms"]) });
  });

  it("reads a patient's stable facts, an event module and a view as JSON", async () => {
    const stable = JSON.parse(text(await client.readResource({ uri: `patient://${pid}/stable` })));
    expect(stable.modules.demographics.payload).toMatchObject({ name: "Ada Example" });
    const labs = JSON.parse(text(await client.readResource({ uri: `patient://${pid}/event-modules/lab_results` })));
    expect(labs).toMatchObject({ patient_id: pid, module_type: "lab_results" });
    const view = JSON.parse(text(await client.readResource({ uri: `patient://${pid}/views/labs_snapshot` })));
    expect(view.content.temp.find((b: any) => b.id === "critical_values").refs).toEqual([ids[1]]);
    await expect(client.readResource({ uri: `patient://${pid}/event-modules/moonphase` })).rejects.toThrow(/unknown event-state module/);
    await expect(client.readResource({ uri: "patient://pat_00000000000000000000000000/stable" })).rejects.toThrow(/not found/);
  });
});

describe("MCP prompts", () => {
  it("lists three prompts with argument schemas", async () => {
    const { prompts } = await client.listPrompts();
    const byName = Object.fromEntries(prompts.map((p) => [p.name, p]));
    expect(Object.keys(byName).sort()).toEqual(["missing_data_elicitation", "provider_alert", "visit_prep_summary"]);
    expect(byName.missing_data_elicitation!.arguments).toEqual([
      expect.objectContaining({ name: "patient_id", required: true }), expect.objectContaining({ name: "view_type", required: true }),
    ]);
    expect(byName.provider_alert!.arguments!.find((x) => x.name === "since")).toMatchObject({ required: false });
  });

  it("missing_data_elicitation does not ask whether the patient uses devices whose readings are flowing", async () => {
    const who = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
    const ask = async () => promptText(await client.getPrompt({ name: "missing_data_elicitation", arguments: { patient_id: who, view_type: "profile_snapshot" } }));
    expect(await ask()).toContain("Do you use any health devices, such as a glucose monitor");
    const cgm = { log_type: "cgm_reading", patient_id: who, timestamp: "2026-07-02T15:00:00Z", payload: { glucose_mg_dl: 110, sensor_timestamp: "2026-07-02T15:00:00Z" } };
    expect((await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: [cgm] } })).json().accepted).toBe(1);
    const after = await ask();
    expect(after).not.toContain("Do you use any health devices, such as a glucose monitor");
    expect(after).toContain("We already receive your glucose monitor readings. Which device sends them");
  });

  it("missing_data_elicitation asks for what the view's template lacks, essentials first", async () => {
    const p = promptText(await client.getPrompt({ name: "missing_data_elicitation", arguments: { patient_id: pid, view_type: "profile_snapshot" } }));
    expect(p).toMatch(/Essential[\s\S]*emergency[\s\S]*If time allows/);
    expect(p).not.toContain("What is your date of birth"); // demographics carry a dob
    const sym = promptText(await client.getPrompt({ name: "missing_data_elicitation", arguments: { patient_id: pid, view_type: "symptom_snapshot" } }));
    expect(sym).toContain("headache");
    expect(sym).toContain(ids[4]);
    // The SDK's own refusals reach the client with one prefix (the client's), not two.
    const bad = await client.getPrompt({ name: "missing_data_elicitation", arguments: { patient_id: pid, view_type: "horoscope" } }).catch((e: Error) => e);
    expect((bad as Error).message).toMatch(/^MCP error -32602: Invalid arguments for prompt missing_data_elicitation: .*symptom_snapshot/);
    const unknown = await client.getPrompt({ name: "horoscope_reading", arguments: {} }).catch((e: Error) => e);
    expect((unknown as Error).message).toBe("MCP error -32602: Prompt horoscope_reading not found");
  });

  it("provider_alert cites the logs of severe symptoms, abnormal labs and missed doses since a time", async () => {
    const p = promptText(await client.getPrompt({ name: "provider_alert", arguments: { patient_id: pid, since: "2026-06-26T08:00:00Z" } }));
    expect(p).toContain(`pain: score 9 (esas_r), severe since 2026-07-03T08:00:00.000Z [${ids[0]}]`);
    expect(p).toContain(`Potassium: 6.9 mmol/L flag HH (CRITICAL) [${ids[1]}]`);
    expect(p).toContain(`Metformin: dose skipped (scheduled 2026-07-02 08:00) [${ids[3]}]`);
    expect(p).not.toContain("Glucose"); // a month before since
    const since = promptText(await client.getPrompt({ name: "provider_alert", arguments: { patient_id: pid, since: "2026-05-01T00:00:00Z" } }));
    expect(since).toContain(`[${ids[2]}]`);
    const later = promptText(await client.getPrompt({ name: "provider_alert", arguments: { patient_id: pid, since: "2026-08-01T00:00:00Z" } }));
    expect(later).toContain("Nothing");
  });

  it("provider_alert counts scheduled doses never reported up to the read, citing the listing", async () => {
    const who = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
    const logs = [
      { log_type: "medication_list_update", patient_id: who, timestamp: "2026-07-01T07:00:00Z", payload: { medications: [{ action: "add", medication_name: "Metformin", rxnorm_cui: "860975", schedule_times: ["08:00", "20:00"] }] } },
      { log_type: "medication_adherence", patient_id: who, timestamp: "2026-07-03T08:05:00Z", payload: { medication_adherence: [{ status: "taken", rxnorm_cui: "860975", scheduled_time: "2026-07-03T08:00:00Z" }] } },
    ];
    const sent = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).json();
    // By default the 7 days before now: the patient stopped reporting in July, so every dose of the week is missed.
    const p = promptText(await client.getPrompt({ name: "provider_alert", arguments: { patient_id: who } }));
    const m = /Metformin: not reported \((\d+) scheduled doses, (\d{4}-\d{2}-\d{2}) (?:08|20):00 to (\d{4}-\d{2}-\d{2}) (08|20):00\)/.exec(p);
    expect(m, p).not.toBeNull();
    expect(Number(m![1]!)).toBeGreaterThanOrEqual(12);
    expect(m![2]! >= new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 10), m![2]).toBe(true);
    expect(p).toContain(`[${sent.results[0].id}]`);
  });

  it("provider_alert: new severe symptoms apart from long-standing ones, one-sided ranges, local dose times, vitals and device readings", async () => {
    const who = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: { timezone: "America/New_York" } })).json().id;
    const sym = (ts: string, name: string, score: number) => ({ log_type: "symptom_report", patient_id: who, timestamp: ts, payload: { instrument: "esas_r", symptoms: [{ name, score }] } });
    const logs = [
      sym("2026-06-01T12:00:00Z", "tiredness", 8), sym("2026-07-02T12:00:00Z", "tiredness", 8),
      sym("2026-06-01T12:00:00Z", "nausea", 2), sym("2026-07-02T12:00:00Z", "nausea", 8),
      { log_type: "lab_results", patient_id: who, timestamp: "2026-07-02T07:00:00Z", payload: { results: [{ loinc_code: "1988-5", test_name: "CRP", value_numeric: 12, unit: "mg/L", reference_range_high: 3, abnormal_flag: "H" }] } },
      { log_type: "medication_adherence", patient_id: who, timestamp: "2026-07-02T13:00:00Z", payload: { medication_adherence: [{ status: "skipped", medication_name: "Ondansetron", scheduled_time: "2026-07-02T12:00:00Z" }] } },
      { log_type: "vitals_measurement", patient_id: who, timestamp: "2026-07-02T14:00:00Z", payload: { measurements: { temperature_celsius: 37.9, heart_rate_bpm: 102, systolic_bp_mmhg: 120 }, context: {}, source: "clinic", collection_datetime: null } },
      { log_type: "cgm_reading", patient_id: who, timestamp: "2026-07-02T15:00:00Z", payload: { glucose_mg_dl: 45, glucose_flag: "normal", sensor_timestamp: "2026-07-02T15:00:00Z" } },
    ];
    const sent = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).json();
    expect(sent.accepted, JSON.stringify(sent.errors)).toBe(logs.length);
    const id = (i: number) => sent.results[i].id as string;
    const p = promptText(await client.getPrompt({ name: "provider_alert", arguments: { patient_id: who, since: "2026-06-28" } }));
    const section = (title: string) => p.slice(p.indexOf(`## ${title}`)).split("\n\n")[0]!;
    expect(section("New severe symptoms")).toContain(`nausea: score 8 (esas_r), severe since 2026-07-02T12:00:00.000Z [${id(3)}]`);
    expect(section("New severe symptoms")).not.toContain("tiredness");
    expect(section("Severe symptoms that were already severe")).toContain(`tiredness: score 8 (esas_r), severe since 2026-06-01T12:00:00.000Z (before this window) [${id(1)}]`);
    expect(p).toContain(`CRP: 12 mg/L flag H, reference ≤ 3 [${id(4)}]`);
    // 12:00 UTC is 08:00 in New York.
    expect(p).toContain(`Ondansetron: dose skipped (scheduled 2026-07-02 08:00) [${id(5)}]`);
    expect(section("Vital signs out of range")).toContain(`Temperature 37.9 °C, Heart rate 102 bpm [${id(6)}]`);
    expect(section("Vital signs out of range")).not.toContain("Systolic");
    expect(section("Device readings out of range")).toContain(`CGM glucose 45 mg/dL [${id(7)}]`);
    expect(p).toContain("Doses are shown in America/New_York");

    const empty = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
    const none = promptText(await client.getPrompt({ name: "provider_alert", arguments: { patient_id: empty } }));
    expect(none).toContain("no symptom, lab, dose, vital sign, device or questionnaire data yet");
    expect(none).not.toContain("1970");
  });

  it("visit_prep_summary is resolved from the views, with their sources", async () => {
    const p = promptText(await client.getPrompt({ name: "visit_prep_summary", arguments: { patient_id: pid } }));
    expect(p).toContain("# Symptom snapshot");
    expect(p).toContain("# Labs snapshot");
    expect(p).toContain(ids[1]);
  });

  it("visit_prep_summary carries the last encounter's note and plan", async () => {
    const logs = [
      { log_type: "care_encounter", patient_id: pid, timestamp: "2026-07-04T09:00:00Z", payload: { encounter_id: "enc-7", status: "finished", encounter_class: "ambulatory", period: { start: "2026-07-04T09:00:00Z" }, reason: "Hyperkalemia follow-up" } },
      { log_type: "clinical_note", patient_id: pid, timestamp: "2026-07-04T10:00:00Z", payload: { note_type: "progress_note", source: "ehr", encounter_id: "enc-7", sections: [{ section_label: "Plan", content: "Stop potassium supplement; repeat BMP in one week." }] } },
      { log_type: "clinical_plan_item", patient_id: pid, timestamp: "2026-07-04T10:05:00Z", payload: { plan_item_id: "pi-7", item_type: "lab", description: "Repeat BMP", status: "scheduled", scheduled_date: "2026-07-11", encounter_id: "enc-7" } },
    ];
    const r = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).json();
    expect(r.accepted, JSON.stringify(r.errors)).toBe(3);
    const p = promptText(await client.getPrompt({ name: "visit_prep_summary", arguments: { patient_id: pid } }));
    expect(p).toContain("Last encounter, note and plan");
    expect(p).toContain("**Plan**: Stop potassium supplement; repeat BMP in one week.");
    expect(p).toContain("**Plan**: Repeat BMP (lab, scheduled, scheduled 2026-07-11)");
    for (const id of r.results.map((x: { id: string }) => x.id)) expect(p).toContain(id);
  });
});

describe("MCP answer size", () => {
  it("cuts a page of logs under 20 kB, says so, and continues from the cursor without gaps", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 20; i++) {
      const r = await call("get_logs", { patient_id: big, limit: 100, ...(cursor ? { cursor } : {}) });
      expect(Buffer.byteLength(r.text)).toBeLessThan(20_500);
      if (r.json.next_cursor !== null) expect(r.json.truncated).toBe(true);
      seen.push(...r.json.logs.map((l: any) => l.id));
      cursor = r.json.next_cursor ?? undefined;
      if (!cursor) break;
    }
    expect(new Set(seen).size).toBe(40);
    expect(seen).toEqual([...ids.slice(6)].reverse());
  });

  it("shortens the longest lists of a large module, keeping the newest, and names the cut", async () => {
    const r = await call("get_event_state_module", { patient_id: big, module_type: "symptoms" });
    expect(Buffer.byteLength(r.text)).toBeLessThan(20_500);
    expect(r.json).toMatchObject({ truncated: true, truncated_lists: [expect.objectContaining({ path: "payload.free_text", total: 20 })] });
    expect(r.json.payload.free_text.at(-1).log_id).toBe(ids.at(-1));
  });
});

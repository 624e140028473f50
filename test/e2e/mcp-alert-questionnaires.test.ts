import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { baseUrl, connectMcp } from "../support/mcp-client.js";
import { startStack, type TestStack } from "../support/stack.js";

/**
 * provider_alert's questionnaire findings, over six weeks of a patient's reports: daily mild
 * ESAS-r check-ins, a PHQ-9 every two weeks that jumps from 8 to 17, a GAD-7 every week that
 * stays at 6, and a FACT-G that falls by more than its MID.
 */
let t: TestStack;
let mcp: Client;

const DAY_MS = 24 * 3600 * 1000;
const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
const daysAgo = (n: number, hour = 10) => new Date(today - n * DAY_MS + hour * 3600 * 1000).toISOString();
const date = (iso: string) => iso.slice(0, 10);

/** Item answers (0-3 each) adding up to `total`, as a PHQ-9 or GAD-7 form sends them. */
const items = (n: number, total: number) => Array.from({ length: n }, (_, k) => ({ item_number: k + 1, response_value: Math.min(3, Math.max(0, total - 3 * k)) }));

function administration(pid: string, at: string, instrument: string, n: number, scores: Record<string, unknown>, change?: Record<string, unknown>) {
  return {
    log_type: "questionnaire_response", patient_id: pid, timestamp: at,
    payload: {
      instrument: { instrument_id: instrument, instrument_type: "validated" },
      administration: { administration_mode: "patient_self_report", platform: "mobile_app" },
      item_responses: items(n, Number(scores.total_score)),
      scores,
      ...(change ? { change } : {}),
    },
  };
}
const gad7 = (pid: string, at: string) => administration(pid, at, "GAD-7", 7, { total_score: 6, total_score_max: 21, severity_category: "mild", clinically_significant: false },
  { minimally_important_difference: 4, change_classification: "stable" });

async function post(logs: object[]): Promise<string[]> {
  const r = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).json();
  expect(r.accepted, JSON.stringify(r.errors).slice(0, 500)).toBe(logs.length);
  return r.results.map((x: { id: string }) => x.id);
}
const newPatient = async () => (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id as string;
const alert = async (pid: string, since: string) => {
  const p = await mcp.getPrompt({ name: "provider_alert", arguments: { patient_id: pid, since } });
  return (p.messages[0]!.content as { text: string }).text;
};
/** The lines of one `##` section of the alert. */
const section = (text: string, title: string) => text.split("\n\n").find((s) => s.startsWith(`## ${title}`))!.split("\n").slice(1);

let pid: string;
let steady: string;
const phq: Record<number, string> = {};
let factBefore: string;
let factAfter: string;

beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  mcp = await connectMcp(baseUrl(t.app), t.adminKey);
  pid = await newPatient();
  steady = await newPatient();
  const checkIns = Array.from({ length: 42 }, (_, d) => ({
    log_type: "symptom_report", patient_id: pid, timestamp: daysAgo(42 - d, 8),
    payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 2 + (d % 2) }, { name: "tiredness", score: 3 }, { name: "depression", score: d > 38 ? 5 : 2 }] },
  }));
  const phqOf = (n: number, total: number, severity: string, change?: Record<string, unknown>, significant = false) =>
    administration(pid, daysAgo(n), "PHQ-9", 9, { total_score: total, total_score_max: 27, severity_category: severity, clinically_significant: significant }, change);
  const questionnaires = [
    phqOf(42, 10, "moderate"),
    phqOf(28, 9, "mild", { minimally_important_difference: 5, change_classification: "stable" }),
    phqOf(14, 8, "mild", { minimally_important_difference: 5, change_classification: "stable" }),
    phqOf(2, 17, "moderately_severe", { prior_score: 8, prior_date: date(daysAgo(14)), change: 9, minimally_important_difference: 5, change_classification: "worsened" }, true),
    ...[35, 28, 21, 14, 7, 1].map((n) => gad7(pid, daysAgo(n))),
    administration(pid, daysAgo(30), "FACT-G", 27, { total_score: 80, total_score_max: 108 }),
    administration(pid, daysAgo(3), "FACT-G", 27, { total_score: 68, total_score_max: 108 }, { minimally_important_difference: 7 }),
  ];
  const ids = await post([...checkIns, ...questionnaires]);
  const q = ids.slice(checkIns.length);
  [42, 28, 14, 2].forEach((n, k) => (phq[n] = q[k]!));
  [factBefore, factAfter] = [q[10]!, q[11]!];
  await post([35, 28, 21, 14, 7, 1].map((n) => gad7(steady, daysAgo(n))));
});
afterAll(async () => {
  await mcp?.close();
  await t?.close();
});

describe("provider_alert: questionnaires", () => {
  it("reports a PHQ-9 going from 8 to 17 with both scores, the prior date and both log ids", async () => {
    const text = await alert(pid, daysAgo(7, 0));
    const lines = section(text, "Questionnaire results");
    expect(lines).toContain(
      `- ${daysAgo(2)}: PHQ-9: 17/27 (moderately severe); +9 from 8 on ${date(daysAgo(14))} (worsened, exceeds MID); MID 5; clinically significant [${phq[2]}, ${phq[14]}]`,
    );
    expect(text).toMatch(/^Write a short alert/);
  });

  it("reports a change of at least the MID in either direction, and leaves out an instrument that did not change", async () => {
    const text = await alert(pid, daysAgo(7, 0));
    const lines = section(text, "Questionnaire results");
    expect(lines).toContain(`- ${daysAgo(3)}: FACT-G: 68/108; -12 from 80 on ${date(daysAgo(30))} (exceeds MID); MID 7 [${factAfter}, ${factBefore}]`);
    expect(lines).toHaveLength(2);
    expect(text).not.toContain("GAD-7");
  });

  it("judges each administration since the time by its own change: the earlier stable PHQ-9s are no findings", async () => {
    const lines = section(await alert(pid, daysAgo(45, 0)), "Questionnaire results");
    expect(lines.filter((l) => l.includes("PHQ-9"))).toHaveLength(1);
    for (const id of [phq[42], phq[28]]) expect(lines.join("\n")).not.toContain(id);
  });

  it("a patient whose questionnaire stays the same has nothing new, and the sentence says questionnaires were looked at", async () => {
    const text = await alert(steady, daysAgo(10, 0));
    expect(section(text, "Questionnaire results")).toEqual(["- none"]);
    expect(text).toMatch(/^Nothing new for patient .* \(no new severe symptoms, abnormal labs, out-of-range vitals or device readings, missed doses, or clinically significant questionnaire results or changes\)/);
  });
});

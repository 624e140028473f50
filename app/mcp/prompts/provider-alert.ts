import { z } from "zod";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { moduleEntry, type PatientState } from "../../../readmodels/patient-state.js";
import { doc, sourceIds } from "../../../readmodels/views/lib.js";
import { findMedication } from "../../../readmodels/modules/medications/index.js";
import { isSevere } from "../../../readmodels/views/symptom.js";
import { AppError } from "../../../src/errors.js";
import { patientIdArg, type McpContext } from "../context.js";
import { cite, promptPatient, resolvePrompt, userMessage } from "./shared.js";

/** Default look-back when no `since` is given: the views' "week" (7 days before the latest data). */
const WEEK_MS = 7 * 24 * 3600 * 1000;

interface Finding {
  timestamp: string;
  line: string;
  log_ids: string[];
}

/**
 * The three things a clinician must hear about, read from the modules so each item names
 * its own log (the views' temp blocks symptoms_to_follow_up, critical_values and
 * missed_doses hold the same facts for the last week, with block-level refs only).
 * Severity is the symptom view's own rule (isSevere).
 */
function findings(state: PatientState, since: string) {
  const severe: Finding[] = (doc(state, "symptoms")?.symptoms ?? []).filter(isSevere).flatMap((s) => {
    const last = s.history[s.history.length - 1];
    return last && last.timestamp >= since
      ? [{ timestamp: last.timestamp, line: `${s.name}: score ${s.current_score} (${s.instrument}), first reported ${s.first_reported_at}`, log_ids: [last.log_id] }]
      : [];
  });
  const labs: Finding[] = (doc(state, "lab_results")?.results ?? []).flatMap((r) =>
    r.history.filter((v) => v.abnormal_flag !== null && v.abnormal_flag !== "N" && v.timestamp >= since).map((v) => ({
      timestamp: v.timestamp,
      line: `${r.test_name ?? r.loinc_code ?? "lab"}: ${v.value_numeric ?? v.value_string ?? "?"}${r.unit ? ` ${r.unit}` : ""} flag ${v.abnormal_flag}${
        v.abnormal_flag === "HH" || v.abnormal_flag === "LL" ? " (CRITICAL)" : ""}${r.reference_range_low !== null || r.reference_range_high !== null ? `, reference ${r.reference_range_low ?? ""}–${r.reference_range_high ?? ""}` : ""}`,
      log_ids: [v.log_id],
    })));
  const missed: Finding[] = (doc(state, "adherence")?.recent ?? []).filter((d) => d.status === "skipped" && d.timestamp >= since).map((d) => ({
    timestamp: d.timestamp,
    line: `${d.medication_name ?? d.rxnorm_cui ?? "medication"}: dose skipped${d.scheduled_time ? ` (scheduled ${d.scheduled_time})` : ""}`,
    log_ids: [d.log_id],
  }));
  // Scheduled doses with no report at all: a patient who stops reporting is not adherent.
  const medications = doc(state, "medications") ?? undefined;
  for (const sch of doc(state, "adherence")?.schedule ?? []) {
    const times = sch.doses.filter((d) => d.status === "unreported" && d.scheduled_time >= since).map((d) => d.scheduled_time);
    if (times.length === 0) continue;
    const name = sch.medication_name ?? sch.rxnorm_cui ?? "medication";
    const span = times.length === 1 ? `scheduled ${times[0]}` : `${times.length} scheduled doses, ${times[0]} to ${times[times.length - 1]}`;
    missed.push({ timestamp: times[times.length - 1]!, line: `${name}: not reported (${span})`, log_ids: sourceIds(findMedication(medications, sch)) });
  }
  const newestFirst = (a: Finding, b: Finding) => (a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : 0);
  return { severe: severe.sort(newestFirst), labs: labs.sort(newestFirst), missed: missed.sort(newestFirst) };
}

/** Latest event time among the modules the alert reads: the default window ends there, not at the clock. */
function latestOf(state: PatientState): string | null {
  const ts = (["symptoms", "lab_results", "adherence"] as const).map((k) => moduleEntry(state, k)?.updated_at);
  return ts.filter((t): t is string => typeof t === "string").sort().at(-1) ?? null;
}

const section = (title: string, items: Finding[]) =>
  [`## ${title}`, ...(items.length ? items.map((f) => `- ${f.timestamp}: ${f.line}${cite(f.log_ids)}`) : ["- none"])].join("\n");

const SINCE_ARG = z.string().optional().describe("ISO 8601 time; only findings at or after it. Default: 7 days before the patient's latest symptom, lab or dose data.");

export function registerProviderAlert(server: McpServer, ctx: McpContext): void {
  server.registerPrompt(
    "provider_alert",
    {
      title: "Provider alert",
      description: "A message for the patient's clinician about what changed since a time: new severe symptoms, abnormal or critical lab values and missed doses, each citing the log ids it comes from.",
      argsSchema: {
        patient_id: patientIdArg(ctx.principal),
        since: SINCE_ARG,
      },
    },
    ({ patient_id, since }, extra) => resolvePrompt(ctx, extra.requestId, async () => {
      const pid = promptPatient(ctx, patient_id);
      const from = since !== undefined && since !== "" ? new Date(since) : undefined;
      if (from && Number.isNaN(from.getTime())) throw new AppError("validation", `since "${since}" is not an ISO 8601 time`);
      const snap = await ctx.services.stateReader.snapshot(ctx.principal, pid);
      const state = snap.stored.state;
      const latest = latestOf(state);
      const start = from?.toISOString() ?? (latest ? new Date(Date.parse(latest) - WEEK_MS).toISOString() : "1970-01-01T00:00:00.000Z");
      const f = findings(state, start);
      const total = f.severe.length + f.labs.length + f.missed.length;
      const material = [
        section("New severe symptoms", f.severe),
        section("Abnormal or critical lab values", f.labs),
        section("Missed doses", f.missed),
      ].join("\n\n");
      const instruction = total === 0
        ? `Nothing for patient ${pid} since ${start} needs a clinician's attention (no severe symptoms, abnormal labs or missed doses). Write one sentence saying so.`
        : [
          `Write a short alert for the clinician of patient ${pid} about the findings below (since ${start}).`,
          "Lead with what is most urgent (critical lab values and severe symptoms), keep it under 150 words, state facts",
          "only (no diagnosis or advice), and keep each finding's log ids in square brackets so the clinician can trace it.",
        ].join(" ");
      return userMessage(`${total} finding(s) for the clinician since ${start}`, `${instruction}\n\n${material}`);
    }),
  );
}

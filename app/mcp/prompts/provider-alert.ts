import { z } from "zod";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { PatientState } from "../../../readmodels/patient-state.js";
import { foldedAlone, readingsOutOfRange, skippedDoses, type LoneLog } from "../../../readmodels/changes/window-logs.js";
import { abnormalLabs, latestOf, LIMITS_TEXT, missedDoses, questionnaireChanges, severeSymptoms, type Finding } from "./alert-findings.js";
import { AppError } from "../../../src/errors.js";
import { patientIdArg, type McpContext } from "../context.js";
import { cite, promptPatient, resolvePrompt, userMessage } from "./shared.js";

/** Default look-back when no `since` is given: the 7 days before the read, as the views' week. */
const WEEK_MS = 7 * 24 * 3600 * 1000;

/**
 * What a clinician must hear about, read from the modules so each item names its own log;
 * readings and skipped doses from the window's logs (`alone`), which may be more than the
 * modules keep (the newest 50 CGM readings: four hours at one every five minutes).
 */
function findings(state: PatientState, since: string, now: string, alone: readonly LoneLog[]) {
  const newestFirst = (a: Finding, b: Finding) => (a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : 0);
  const severe = severeSymptoms(state, since);
  const readings = readingsOutOfRange(alone);
  return {
    severe: severe.fresh.sort(newestFirst),
    ongoing: severe.ongoing.sort(newestFirst),
    labs: abnormalLabs(state, since).sort(newestFirst),
    vitals: readings.vitals.sort(newestFirst),
    devices: readings.devices.sort(newestFirst),
    missed: missedDoses(state, since, now, skippedDoses(alone)).sort(newestFirst),
    questionnaires: questionnaireChanges(state, since).sort(newestFirst),
  };
}

const section = (title: string, items: Finding[]) =>
  [`## ${title}`, ...(items.length ? items.map((f) => `- ${f.timestamp}: ${f.line}${cite(f.log_ids)}`) : ["- none"])].join("\n");

const SINCE_ARG = z.string().optional().describe("ISO 8601 time; only findings at or after it. Default: 7 days before now.");

export function registerProviderAlert(server: McpServer, ctx: McpContext): void {
  server.registerPrompt(
    "provider_alert",
    {
      title: "Provider alert",
      description: "A message for the patient's clinician about what changed since a time: new severe symptoms, abnormal or critical lab values, vital signs and device readings out of range, missed doses, and clinically significant questionnaire results or changes, each citing the log ids it comes from.",
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
      if (!from && latest === null) {
        return userMessage("No data yet", `Patient ${pid} has no symptom, lab, dose, vital sign, device or questionnaire data yet: there is nothing to alert the clinician about. Say so in one sentence.`);
      }
      const now = ctx.services.stateReader.now();
      const start = from?.toISOString() ?? new Date(Date.parse(now) - WEEK_MS).toISOString();
      const { logs } = await ctx.services.horizonReader.history(ctx.principal, pid);
      const f = findings(state, start, now, foldedAlone(state, logs.filter((l) => l.timestamp >= start)));
      const total = f.severe.length + f.labs.length + f.vitals.length + f.devices.length + f.missed.length + f.questionnaires.length;
      const material = [
        section("New severe symptoms (severe since this window began)", f.severe),
        section("Abnormal or critical lab values", f.labs),
        section("Vital signs out of range", f.vitals),
        section("Device readings out of range", f.devices),
        section("Missed doses (times in the patient's time zone; doses never reported are tracked over the 7 days before now)", f.missed),
        section("Questionnaire results (clinically significant, classified worsened, or changed by at least the minimally important difference since the previous administration)", f.questionnaires),
        section("Severe symptoms that were already severe before this window", f.ongoing),
        `Ranges used: ${LIMITS_TEXT}. Doses are shown in ${state.timezone}.`,
      ].join("\n\n");
      const instruction = total === 0
        ? `Nothing new for patient ${pid} since ${start} needs a clinician's attention (no new severe symptoms, abnormal labs, out-of-range vitals or device readings, missed doses, or clinically significant questionnaire results or changes). Write one sentence saying so${f.ongoing.length ? ", and mention the symptoms that stay severe" : ""}.`
        : [
          `Write a short alert for the clinician of patient ${pid} about the findings below (since ${start}).`,
          "Lead with what is most urgent (critical lab values, new severe symptoms, out-of-range vitals), keep it under 150",
          "words, state facts only (no diagnosis or advice), and keep each finding's log ids in square brackets so the",
          "clinician can trace it.",
        ].join(" ");
      return userMessage(`${total} finding(s) for the clinician since ${start}`, `${instruction}\n\n${material}`);
    }),
  );
}

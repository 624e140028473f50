import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import { z } from "zod";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ModuleKey } from "../../../readmodels/module.js";
import { moduleEntry, type PatientState } from "../../../readmodels/patient-state.js";
import { MODELS } from "../../../readmodels/registry.js";
import { doc } from "../../../readmodels/views/lib.js";
import { VIEW_INPUTS, VIEW_TYPES, viewTitle, type ViewBlock } from "../../../readmodels/views/index.js";
import { patientIdArg, type McpContext } from "../context.js";
import { cite, promptPatient, resolvePrompt, userMessage } from "./shared.js";

/**
 * What to ask the patient when a view's input module holds nothing. Modules filled by
 * devices or the app itself (engagement, conversations, questionnaires) are not asked
 * about in conversation.
 */
const QUESTIONS: Partial<Record<ModuleKey, string>> = {
  demographics: "Could you confirm your basic details: full name, date of birth, sex, preferred language, address and phone number?",
  condition_diagnosis: "Which conditions or diagnoses have you been told you have, when were they diagnosed, and which one is the main one being treated?",
  allergies: "Do you have any allergies (to medicines, foods or anything else), and what happens when you are exposed? Or are there none that you know of?",
  care_team: "Who looks after your care (doctors, nurses, others), and what is each one's role?",
  emergency_contact: "Who should we contact in an emergency? Their name, how they are related to you, and a phone number.",
  insurance: "Which health insurance do you have (insurer, plan, member number)?",
  pharmacy: "Which pharmacy do you usually use?",
  user_preferences: "How would you like us to keep in touch (app notifications, email or text), and is there anything about how we explain things that works best for you?",
  social: "Who do you live with, who supports you day to day, and do you have reliable transport and stable housing?",
  immunizations: "Which vaccinations have you had in recent years (for example flu, COVID-19, pneumonia), and roughly when?",
  family_history: "Do any close relatives (parents, brothers or sisters, children) have serious conditions such as cancer, heart disease or diabetes?",
  devices: "Do you use any health devices, such as a glucose monitor, blood pressure cuff, smartwatch or pump?",
  medications: "Which medicines do you take now? For each: the name, the dose, how often and at what times.",
  adherence: "Over the last few days, have you taken your medicines as planned? Did you miss or skip any dose, and why?",
  symptoms: "How have you been feeling lately? Any symptoms such as pain, tiredness, nausea or shortness of breath, and how bad each one is from 0 (none) to 10 (worst)?",
  emotional_state: "How has your mood been over the past week (for example worried, low, calm), and how strong was it from 0 to 10?",
  lab_results: "Have you had blood tests or other lab work recently? Where were they done, and do you have the results?",
  vitals: "Do you have recent readings of your blood pressure, heart rate, temperature or weight?",
  heart: "Do you wear a watch or device that measures heart rate or oxygen level? Could you connect it?",
  sleep: "How have you been sleeping (hours per night, waking up)? Do you track sleep with a device?",
  physical_activity: "How active have you been (walking, exercise)? Do you track steps with a phone or watch?",
  glucose: "Do you check your blood sugar or use a continuous glucose monitor? What have the readings been?",
};

/** profile_snapshot's missing essentials as questions, and the module whose question they make redundant. */
const ESSENTIALS: Record<string, { question: string; module: ModuleKey }> = {
  date_of_birth: { question: "What is your date of birth?", module: "demographics" },
  emergency_contact: { question: QUESTIONS.emergency_contact!, module: "emergency_contact" },
  allergies: { question: QUESTIONS.allergies!, module: "allergies" },
  primary_condition: { question: "Which condition is the main one you are being treated for?", module: "condition_diagnosis" },
};

interface Ask {
  question: string;
  why: string;
  log_types: readonly string[];
  refs: readonly string[];
}

/**
 * The follow-up items the view template itself flags (its temp blocks), where it has
 * them: these come first. Pending symptom details are read from the module, which keeps
 * each one's log id (the block's refs are for the whole block).
 */
function templateAsks(temp: readonly ViewBlock[], state: PatientState): { asks: Ask[]; covered: Set<ModuleKey> } {
  const asks: Ask[] = [];
  const covered = new Set<ModuleKey>();
  for (const b of temp) {
    if (b.id === "missing_essentials") {
      for (const m of b.data as { missing: string; ask: string }[]) {
        const e = ESSENTIALS[m.missing];
        if (e) covered.add(e.module);
        asks.push({ question: e?.question ?? m.ask, why: `essential missing: ${m.missing}`, log_types: e ? MODELS[e.module].handles : [], refs: [] });
      }
    }
    if (b.id === "symptoms_to_follow_up") {
      for (const p of doc(state, "symptoms")?.pending_details ?? []) {
        asks.push({
          question: `You mentioned ${p.symptom_type} (${p.detail_type}: "${p.response}"). How bad is it now, from 0 (none) to 10 (worst)?`,
          why: "symptom detail reported without a score", log_types: ["symptom_report"], refs: [p.log_id],
        });
      }
    }
  }
  return { asks, covered };
}

/** Device data modules, and what their readings are called in a question. */
const DEVICE_DATA: readonly [ModuleKey, string][] = [["glucose", "glucose monitor"], ["heart", "heart rate or oxygen"], ["sleep", "sleep"], ["physical_activity", "activity"]];

/**
 * No device is registered, but readings may be flowing already (a CGM feeding the glucose
 * module): then the question names them and asks only about others.
 */
function devicesQuestion(state: PatientState): string {
  const flowing = DEVICE_DATA.filter(([k]) => moduleEntry(state, k) !== undefined).map(([, what]) => what);
  if (flowing.length === 0) return QUESTIONS.devices!;
  return `We already receive your ${flowing.join(", ")} readings. Which device sends them, and do you use any other health devices (for example a blood pressure cuff, scale or pump)?`;
}

const numbered = (asks: Ask[], from = 1) =>
  asks.map((a, i) => `${from + i}. ${a.question}\n   (why: ${a.why}${a.log_types.length ? `; record as ${a.log_types.join(" or ")}` : ""})${cite(a.refs)}`);

/** Completable: a client offering completion/complete gets the view types that start with what was typed. */
const VIEW_TYPE_ARG = completable(
  z.enum(VIEW_TYPES).describe("The view (template) to complete, e.g. profile_snapshot or medication_snapshot."),
  (value) => VIEW_TYPES.filter((t) => t.startsWith(value ?? "")),
);

export function registerMissingDataElicitation(server: McpServer, ctx: McpContext): void {
  server.registerPrompt(
    "missing_data_elicitation",
    {
      title: "Missing data elicitation",
      description: "Questions to ask the patient for what their state lacks for one view's template (empty input modules and the template's own follow-up items), each with the log type to record the answer as.",
      argsSchema: {
        patient_id: patientIdArg(ctx.principal),
        view_type: VIEW_TYPE_ARG,
      },
    },
    ({ patient_id, view_type }, extra) => resolvePrompt(ctx, extra.requestId, async () => {
      const pid = promptPatient(ctx, patient_id);
      const reader = ctx.services.stateReader;
      const snap = await reader.snapshot(ctx.principal, pid);
      const view = await reader.view(snap.stored, view_type);
      const empty = VIEW_INPUTS[view_type].filter((k) => moduleEntry(snap.stored.state, k) === undefined);
      const first = templateAsks(view.temp, snap.stored.state);
      const rest: Ask[] = empty.flatMap((k) => {
        const question = k === "devices" ? devicesQuestion(snap.stored.state) : QUESTIONS[k];
        return question && !first.covered.has(k) ? [{ question, why: `nothing recorded for ${k}`, log_types: MODELS[k].handles, refs: [] }] : [];
      });
      const asks = [...first.asks, ...rest];
      const title = viewTitle(view_type);
      if (asks.length === 0) {
        return userMessage(`Nothing missing for the ${title}`, `The ${title} of patient ${pid} has data for every part of its template. Ask the patient only whether anything has changed since ${view.valid_from ?? "the last update"}.`);
      }
      return userMessage(`${asks.length} questions to complete the ${title}`, [
        `You are talking with patient ${pid}. Their ${title} is missing the information below.`,
        "Ask these questions one at a time, in plain and friendly language, waiting for each answer. Do not ask for",
        "anything already known, do not give medical advice, and if the patient prefers not to answer, move on.",
        "After the conversation, list each answer with the log type it should be recorded as.",
        ...(first.asks.length ? ["", "Essential (ask these first):", ...numbered(first.asks)] : []),
        ...(rest.length ? ["", "If time allows:", ...numbered(rest, first.asks.length + 1)] : []),
      ].join("\n"));
    }),
  );
}

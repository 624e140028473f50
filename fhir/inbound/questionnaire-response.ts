import type { Questionnaire, QuestionnaireItem, QuestionnaireResponse, QuestionnaireResponseItem, QuestionnaireResponseItemAnswer } from "@medplum/fhirtypes";
import { codesIn, referenceType, SYSTEMS } from "../lib/datatypes.js";
import { unmappable, type MapContext, type MapIssue, type Mapper } from "../types.js";
import { ANSWER_SCORES, INSTRUMENTS } from "./loinc.js";

type Path = (string | number)[];
type Value = number | string | boolean;

/** Completed and amended responses are whole administrations; in-progress, stopped and entered-in-error are not. */
const KEPT_STATUS: ReadonlySet<string> = new Set(["completed", "amended"]);
const ORDINAL = "http://hl7.org/fhir/StructureDefinition/ordinalValue";
const LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/;
/** An item or extension that carries the total by its name, when the instrument's LOINC total code is not used. */
const TOTAL_NAME = /^total([-_ ]?score)?$/i;

/**
 * Who gave the answers → administration_mode: a clinician as author interviewed the
 * patient; a related person answered for them; otherwise the patient answered.
 */
const MODE: Readonly<Record<string, "clinician_administered" | "caregiver_proxy">> = {
  Practitioner: "clinician_administered", PractitionerRole: "clinician_administered", RelatedPerson: "caregiver_proxy",
};

interface Instrument { instrument_id: string; instrument_type: "validated" | "custom"; instrument_version?: string; total?: string; total_max?: number }

/** The instrument: a LOINC panel the table knows (validated), else the Questionnaire's name or the canonical's last segment (custom). */
function instrumentOf(canonical: string, questionnaire: Questionnaire | undefined): Instrument {
  const [url = "", version] = canonical.split("|");
  const panel = [...codesIn(questionnaire?.code?.[0], SYSTEMS.loinc), /(\d+-\d)$/.exec(url)?.[1] ?? ""].find((c) => INSTRUMENTS[c]);
  const known = panel ? INSTRUMENTS[panel] : undefined;
  const instrument_version = version ?? questionnaire?.version;
  const base = { ...(instrument_version ? { instrument_version } : {}) };
  if (known) return { instrument_id: known.instrument_id, instrument_type: "validated", total: known.total, total_max: known.total_max, ...base };
  const name = questionnaire?.name ?? questionnaire?.title ?? url.split("/").filter(Boolean).pop() ?? url;
  return { instrument_id: name, instrument_type: "custom", ...base };
}

/** An answer's value: numbers, booleans and text as they are; a coding by its score (ordinalValue, or the LOINC answer list), else its text. */
function answerValue(a: QuestionnaireResponseItemAnswer, path: Path): { value: Value; label?: string } | MapIssue {
  if (a.valueInteger !== undefined) return { value: a.valueInteger };
  if (a.valueDecimal !== undefined) return { value: a.valueDecimal };
  if (a.valueBoolean !== undefined) return { value: a.valueBoolean };
  if (a.valueQuantity?.value !== undefined) return { value: a.valueQuantity.value };
  const text = a.valueString ?? a.valueDate ?? a.valueDateTime ?? a.valueTime ?? a.valueUri;
  if (text !== undefined) return { value: text };
  const c = a.valueCoding;
  if (c) {
    const label = c.display;
    const ordinal = c.extension?.find((e) => e.url === ORDINAL)?.valueDecimal;
    const score = ordinal ?? (c.system === SYSTEMS.loinc && c.code ? ANSWER_SCORES[c.code] : undefined);
    if (score !== undefined) return { value: score, ...(label ? { label } : {}) };
    const shown = label ?? c.code;
    if (shown) return { value: shown, ...(label ? { label } : {}) };
  }
  return { path, message: "is not an answer the catalog keeps: answer with a number, text, boolean, date or coding" };
}

/** The Questionnaire's item of a linkId, for its text when the response leaves it out. */
function defined(items: QuestionnaireItem[] | undefined, linkId: string): QuestionnaireItem | undefined {
  for (const i of items ?? []) {
    if (i.linkId === linkId) return i;
    const inner = defined(i.item, linkId);
    if (inner) return inner;
  }
  return undefined;
}

interface Answered { item: QuestionnaireResponseItem; path: Path }

/** The response's items with answers, depth first in the order sent (groups and answers' nested items opened), and how many were left unanswered. */
function flatten(items: QuestionnaireResponseItem[] | undefined, path: Path, out: { answered: Answered[]; skipped: number }): void {
  (items ?? []).forEach((item, i) => {
    const at = [...path, "item", i];
    if ((item.answer ?? []).length > 0) out.answered.push({ item, path: at });
    else if ((item.item ?? []).length === 0) out.skipped += 1;
    flatten(item.item, at, out);
    item.answer?.forEach((a, j) => flatten(a.item, [...at, "answer", j], out));
  });
}

const isTotal = (linkId: string, instrument: Instrument, q: Questionnaire | undefined) => {
  const id = linkId.replace(/^\//, "");
  return id === instrument.total || TOTAL_NAME.test(id) || (instrument.total !== undefined && codesIn(defined(q?.item, linkId)?.code?.[0], SYSTEMS.loinc).includes(instrument.total));
};

function administrationOf(r: QuestionnaireResponse): { administration: Record<string, unknown> } | MapIssue {
  const byAuthor = MODE[referenceType(r.author) ?? ""] === "clinician_administered";
  const who = byAuthor ? r.author : r.source ?? r.author;
  const mode = MODE[referenceType(who) ?? ""] ?? "patient_self_report";
  const administration: Record<string, unknown> = { administration_mode: mode };
  if (r.language && LANGUAGE.test(r.language)) administration.language = r.language;
  if (mode === "patient_self_report") return { administration };
  if (!who?.display) return { path: [byAuthor ? "author" : r.source ? "source" : "author", "display"], message: `is required: a ${mode} response must name who administered it` };
  return { administration: { ...administration, administered_by: { name: who.display, role: byAuthor ? "clinician" : "caregiver" } } };
}

/**
 * QuestionnaireResponse → questionnaire_response: the instrument from its Questionnaire
 * (a LOINC panel the table knows, else custom), each answered item in order (item_number
 * 1, 2, …), and a total score when an item (the instrument's LOINC total, or linkId
 * "total") or an extension (…totalScore) carries one.
 */
export const mapQuestionnaireResponse: Mapper<QuestionnaireResponse> = (r, ctx: MapContext) => {
  if (!KEPT_STATUS.has(r.status)) return unmappable(["status"], `is ${r.status}: only completed or amended responses are kept (one log per completed instrument)`);
  if (!r.questionnaire) return unmappable(["questionnaire"], `is required: it names the instrument (known LOINC panels: ${Object.entries(INSTRUMENTS).map(([c, i]) => `${c} ${i.instrument_id}`).join(", ")})`);
  const found = ctx.resolve(r.questionnaire.split("|")[0]!);
  const q = found?.resourceType === "Questionnaire" ? found : undefined;
  const instrument = instrumentOf(r.questionnaire, q);
  const flat = { answered: [] as Answered[], skipped: 0 };
  flatten(r.item, [], flat);
  const items: Record<string, unknown>[] = [];
  let total: { value: number; path: Path } | undefined;
  let nonNumeric: Path | undefined;
  for (const { item, path } of flat.answered) {
    const answers = item.answer!.map((a, j) => answerValue(a, [...path, "answer", j]));
    const issue = answers.find((a): a is MapIssue => "path" in a);
    if (issue) return { ok: false, issues: [issue] };
    const values = answers as { value: Value; label?: string }[];
    const one = values.length === 1 ? values[0]! : { value: values.map((v) => String(v.value)).join("; ") };
    if (isTotal(item.linkId, instrument, q) && typeof one.value === "number") {
      total = { value: one.value, path: [...path, "answer", 0] };
      continue;
    }
    if (typeof one.value !== "number") nonNumeric ??= [...path, "answer"];
    const text = item.text ?? defined(q?.item, item.linkId)?.text;
    if (!text && instrument.instrument_type === "custom") return unmappable([...path, "text"], `is required: ${instrument.instrument_id} is not a known instrument, so every item needs its question text`);
    items.push({ item_number: items.length + 1, ...(text ? { item_text: text } : {}), response_value: one.value, ...(one.label ? { response_label: one.label } : {}) });
  }
  if (items.length === 0) return unmappable(["item"], "holds no answered item");
  const at = (r.extension ?? []).findIndex((e) => /total-?score$/i.test(e.url));
  const fromExtension = r.extension?.[at]?.valueDecimal ?? r.extension?.[at]?.valueInteger;
  if (!total && fromExtension !== undefined) total = { value: fromExtension, path: ["extension", at] };
  const scores: Record<string, unknown> = {};
  if (total) {
    if (nonNumeric) return unmappable(nonNumeric, "is not numeric, so the total score sent cannot be kept (a total is kept only over numeric answers): answer with a number or a coding with an ordinalValue");
    if (instrument.total_max !== undefined && total.value > instrument.total_max) return unmappable(total.path, `${total.value} is above ${instrument.instrument_id}'s highest total ${instrument.total_max}`);
    scores.total_score = total.value;
    if (instrument.total_max !== undefined) scores.total_score_max = instrument.total_max;
  }
  const admin = administrationOf(r);
  if ("path" in admin) return { ok: false, issues: [admin] };
  const { total: _t, total_max: _m, ...named } = instrument;
  const administration = { ...admin.administration, items_completed: items.length, items_skipped: flat.skipped };
  return { ok: true, logs: [{ log_type: "questionnaire_response", payload: { instrument: named, administration, item_responses: items, scores } }] };
};

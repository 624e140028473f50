import { Type, type Static } from "@sinclair/typebox";
import { eachItem, entry, issue, type CatalogEntry, type PayloadIssue } from "../issues.js";
import type { LOG_GROUPS } from "../log-types.js";
import {
  Amount, Bool, Count, DateOrDateTimeStr, Entries, Enum, Int, LanguageTag, Num, Obj, Opt, ReqStr, Str, extensible, withSource,
} from "./common.js";

const ResponseValue = Type.Union([Num(), Str(), Bool()], { description: "A number, string or boolean" });
const ScaleMax = Opt(Num({ description: "Numeric responses only; the response may not exceed it" }));
const ItemNumber = (o: { description?: string } = {}) => Int({ minimum: 1, ...o });

export const QuestionnaireResponse = Obj(
  {
    instrument: Obj({
      instrument_id: ReqStr({ description: "For example PHQ-9, GAD-7, FACT-G" }),
      instrument_type: Enum(["validated", "custom"], { description: "custom requires item_text on every item" }),
      instrument_version: Opt(Str()),
      recall_period_days: Opt(Count({ description: "Resolved from the registry for standard instruments" })),
    }),
    administration: Obj({
      administration_mode: Enum(["patient_self_report", "clinician_administered", "caregiver_proxy"], {
        description: "Any mode other than patient_self_report requires administered_by.name",
      }),
      platform: Opt(Enum(["mobile_app", "web", "paper_transcribed"])),
      language: Opt(LanguageTag()),
      completion_time_seconds: Opt(Amount()),
      items_completed: Opt(Count()),
      items_skipped: Opt(Count()),
      administered_by: Opt(
        Obj({
          name: Opt(Str({ description: "Required when administration_mode is not patient_self_report" })),
          npi: Opt(Str()),
          role: Opt(Str()),
        }),
      ),
    }),
    item_responses: Entries(
      Obj({
        item_number: ItemNumber({ description: "1-indexed" }),
        item_text: Opt(Str({ description: "Required on every item when instrument_type is custom" })),
        response_value: ResponseValue,
        response_label: Opt(Str()),
        response_scale_max: ScaleMax,
      }),
    ),
    scores: Obj({
      total_score: Opt(Num({ description: "Only when every response_value is numeric; not above total_score_max" })),
      total_score_max: Opt(Num()),
      severity_category: Opt(Str({ description: "minimal, mild, moderate, and so on" })),
      domain_scores: Opt(Type.Record(Type.String(), Num(), { description: "Domain name to score" })),
      clinically_significant: Opt(Bool()),
      significance_threshold: Opt(Num()),
    }),
    change: Opt(
      Obj({
        prior_score: Opt(Num()),
        prior_date: Opt(DateOrDateTimeStr()),
        change: Opt(Num()),
        minimally_important_difference: Opt(Num()),
        change_classification: Opt(Enum(["improved", "stable", "worsened"])),
      }),
    ),
    ...extensible,
  },
  { description: "One event per completed instrument." },
);

type Item = { response_value: number | string | boolean; response_scale_max?: number };

function checkScaleMax(item: Item, path: (string | number)[]): PayloadIssue[] {
  if (item.response_scale_max === undefined) return [];
  if (typeof item.response_value !== "number") {
    return [issue([...path, "response_scale_max"], "is only allowed when response_value is numeric", item.response_scale_max)];
  }
  if (item.response_value > item.response_scale_max) {
    return [issue([...path, "response_value"], `response_value ${item.response_value} is above response_scale_max ${item.response_scale_max}`, item.response_value)];
  }
  return [];
}

export function refineQuestionnaireResponse(p: Static<typeof QuestionnaireResponse>): PayloadIssue[] {
  const out: PayloadIssue[] = [];
  const { administration_mode: mode, administered_by: by } = p.administration;
  if (mode !== "patient_self_report" && !by?.name) {
    out.push(issue(["administration", "administered_by", "name"], `is required when administration_mode is ${mode}`, by?.name));
  }
  const custom = p.instrument.instrument_type === "custom";
  out.push(
    ...eachItem(p.item_responses, ["item_responses"], (item, path) => {
      const found = checkScaleMax(item, path);
      if (custom && !item.item_text) found.unshift(issue([...path, "item_text"], "is required on every item of a custom instrument", item.item_text));
      return found;
    }),
  );
  const { total_score: total, total_score_max: max } = p.scores;
  if (total !== undefined) {
    const i = p.item_responses.findIndex((r) => typeof r.response_value !== "number");
    const nonNumeric = p.item_responses[i];
    if (nonNumeric !== undefined) {
      const shown = JSON.stringify(nonNumeric.response_value);
      out.push(issue(["scores", "total_score"], `is only allowed when every response_value is numeric (item_responses[${i}] is ${shown})`, total));
    } else if (max !== undefined && total > max) {
      out.push(issue(["scores", "total_score"], `total_score ${total} is above total_score_max ${max}`, total));
    }
  }
  return out;
}

export const QuestionnaireItemResponse = Obj({
  question: ReqStr(),
  response_value: ResponseValue,
  response_scale_max: ScaleMax,
  response_label: Opt(Str()),
  instrument_id: Opt(Str()),
  item_number: Opt(ItemNumber({ description: "1-indexed" })),
  context: Opt(Enum(["conversation", "check_in", "standalone"])),
  ...withSource,
});

export const questionnaireEntries = {
  questionnaire_response: entry(QuestionnaireResponse, refineQuestionnaireResponse),
  questionnaire_item_response: entry(QuestionnaireItemResponse, (p) => checkScaleMax(p, [])),
} satisfies Record<(typeof LOG_GROUPS)["questionnaire"][number], CatalogEntry>;

import type { Observation } from "@medplum/fhirtypes";
import { codesIn, codesOfAll, conceptText, effectiveOf, quantityOf, referenceText, SYSTEMS } from "../lib/datatypes.js";
import { unmappable, type MapContext, type MapOutcome, type Mapper } from "../types.js";
import { flagOf, labResultOf, performingLab, PUT_RIGHT, resultStatus } from "./lab.js";
import { GLUCOSE, GLUCOSE_MG_DL_PER_MMOL, SOCIAL_HISTORY, vitalCodes } from "./loinc.js";
import { isVitalSign, mapVitalSigns } from "./vital-signs.js";

/** cgm_reading's glucose_flag from the observation's interpretation. */
const GLUCOSE_FLAG: Readonly<Record<string, "high" | "low" | "normal">> = { H: "high", HH: "high", L: "low", LL: "low", N: "normal" };

const MAPPED = () =>
  `mapped are vital-signs (LOINC ${vitalCodes().join(", ")}), laboratory (any test), social-history (LOINC ${Object.keys(SOCIAL_HISTORY).join(", ")}) ` +
  `and a blood glucose from a device (LOINC ${Object.keys(GLUCOSE).join(", ")} with Observation.device)`;

/** A laboratory Observation on its own → lab_results with its one result. */
function mapLab(o: Observation, ctx: MapContext): MapOutcome {
  const r = labResultOf(o, [], ctx);
  if (!r.ok) return { ok: false, issues: [r.issue] };
  const collected = effectiveOf(o);
  const lab = performingLab(o.performer, ctx);
  return {
    ok: true,
    logs: [{ log_type: "lab_results", payload: { results: [r.result], ...(collected ? { collection_datetime: collected } : {}), ...(lab ? { performing_lab: lab } : {}) } }],
  };
}

/**
 * A blood glucose with a device → cgm_reading: the glucose module is where the catalog
 * keeps device glucose (day statistics, time in range), and a monitor's readings every few
 * minutes would crowd a lab test's history of 50. Without a device it is a lab result.
 */
function mapDeviceGlucose(o: Observation, code: string, ctx: MapContext): MapOutcome {
  const status = resultStatus(o, [], PUT_RIGHT.glucose);
  if ("issue" in status) return { ok: false, issues: [status.issue] };
  const q = quantityOf(o.valueQuantity);
  if (!q) return unmappable(["valueQuantity"], `is required: a ${GLUCOSE[code]!.name} reading needs its value in mg/dL or mmol/L`);
  const unit = o.valueQuantity?.code ?? q.unit;
  const mmol = unit === "mmol/L" || (unit === undefined && GLUCOSE[code]!.mmol);
  if (!mmol && unit !== "mg/dL" && unit !== undefined) return unmappable(["valueQuantity", "code"], `${unit} is not a glucose unit the service reads: send mg/dL or mmol/L`);
  const sensor_timestamp = effectiveOf(o);
  if (!sensor_timestamp) return unmappable(["effective[x]"], "is required: a device glucose reading needs the time it was measured (effectiveDateTime or effectiveInstant)");
  const device = o.device?.reference ? ctx.resolve(o.device.reference) : undefined;
  const provider = (device?.resourceType === "Device" ? device.manufacturer : undefined) ?? referenceText(o.device);
  const flag = flagOf(o.interpretation);
  const payload: Record<string, unknown> = {
    glucose_mg_dl: mmol ? Math.round(q.value * GLUCOSE_MG_DL_PER_MMOL * 10) / 10 : q.value,
    sensor_timestamp,
    ...(flag ? { glucose_flag: GLUCOSE_FLAG[flag] } : {}),
    ...(provider ? { device_provider: provider } : {}),
  };
  return { ok: true, logs: [{ log_type: "cgm_reading", timestamp: sensor_timestamp, payload }] };
}

/** The answer of a social-history observation as the text social_determinants keeps. */
function answerOf(o: Observation): string | undefined {
  const q = quantityOf(o.valueQuantity);
  if (q) return q.unit ? `${q.value} ${q.unit}` : String(q.value);
  if (o.valueInteger !== undefined) return String(o.valueInteger);
  if (o.valueBoolean !== undefined) return o.valueBoolean ? "yes" : "no";
  return o.valueString ?? conceptText(o.valueCodeableConcept);
}

/**
 * Social history → social_determinants: the codes with a field there fill it; tobacco and
 * alcohol, which it has no field for, go in its extensions.
 */
function mapSocial(o: Observation): MapOutcome {
  const code = codesIn(o.code, SYSTEMS.loinc).find((c) => SOCIAL_HISTORY[c]);
  if (!code) {
    const known = Object.entries(SOCIAL_HISTORY).map(([c, s]) => `${c} (${s.name})`).join(", ");
    return unmappable(["code"], `is not a social-history code the catalog keeps: mapped LOINC codes are ${known}`);
  }
  const status = resultStatus(o, [], PUT_RIGHT.social);
  if ("issue" in status) return { ok: false, issues: [status.issue] };
  const answer = answerOf(o);
  if (answer === undefined) return unmappable(["value[x]"], `is required: the ${SOCIAL_HISTORY[code]!.name} needs an answer (valueCodeableConcept, valueString, valueBoolean or valueQuantity)`);
  const { field, typed } = SOCIAL_HISTORY[code]!;
  return { ok: true, logs: [{ log_type: "social_determinants", payload: typed ? { [field]: answer } : { extensions: { [field]: answer } } }] };
}

/**
 * Observation → by its LOINC code and category: a vital sign (any category) to
 * vitals_measurement; a blood glucose with a device to cgm_reading; social history to
 * social_determinants; a laboratory result, or a coded result with no category, to
 * lab_results. Other categories (survey, exam, imaging, procedure, therapy, activity)
 * have no home and are refused, naming what is mapped.
 */
export const mapObservation: Mapper<Observation> = (o, ctx) => {
  if (isVitalSign(o)) return mapVitalSigns(o);
  const loinc = codesIn(o.code, SYSTEMS.loinc);
  const glucose = loinc.find((c) => GLUCOSE[c]);
  if (glucose && o.device) return mapDeviceGlucose(o, glucose, ctx);
  const categories = codesOfAll(o.category);
  if (categories.includes("social-history") || loinc.some((c) => SOCIAL_HISTORY[c])) return mapSocial(o);
  if (categories.includes("laboratory") || (categories.length === 0 && loinc.length > 0)) return mapLab(o, ctx);
  if (categories.includes("vital-signs")) return unmappable(["code"], `is not a vital sign the catalog keeps: ${MAPPED()}`);
  if (categories.length === 0) return unmappable(["category"], `is required when the code is not LOINC: ${MAPPED()}`);
  const survey = categories.includes("survey") ? "; a survey is sent as a QuestionnaireResponse" : "";
  return unmappable(["category"], `${categories.join(", ")} has no place in the patient's logs: ${MAPPED()}${survey}`);
};

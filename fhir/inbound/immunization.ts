import type { Immunization } from "@medplum/fhirtypes";
import { codeOf, codingIn, conceptText, dateOrInstant, instantOf, SYSTEMS } from "../lib/datatypes.js";
import { clinicianOf, nameOf } from "../lib/people.js";
import { unmappable, type Mapper } from "../types.js";

/** FHIR immunization-status → the catalog's status (the same three, snake_case). */
const STATUS: Record<string, string> = { completed: "completed", "not-done": "not_done", "entered-in-error": "entered_in_error" };

/** v3 RouteOfAdministration codes → the catalog's route words; other routes by their text. */
const ROUTE: Record<string, string> = { IM: "intramuscular", SQ: "subcutaneous", IDINJ: "intradermal", NASINHLC: "intranasal", PO: "oral" };

/** v3 ActSite codes → the catalog's site words; other sites by their text. */
const SITE: Record<string, string> = { LA: "left_arm", RA: "right_arm", LD: "left_deltoid", RD: "right_deltoid", LT: "left_thigh", RT: "right_thigh" };

/** Immunization → immunization: one dose, named by its CVX code and vaccine text. */
export const mapImmunization: Mapper<Immunization> = (im, ctx) => {
  const vaccine_name = conceptText(im.vaccineCode);
  if (!vaccine_name) return unmappable(["vaccineCode"], "needs a coding or text naming the vaccine (a CVX code is preferred)");
  // The dose is kept per day given: a date the service cannot read would file it under the day it arrived.
  if (im.occurrenceString !== undefined) return unmappable(["occurrenceString"], "cannot be dated: send occurrenceDateTime with the day the dose was given");
  const status = STATUS[im.status];
  if (!status) return unmappable(["status"], `${im.status} is not an immunization status the catalog has (completed, not-done, entered-in-error)`);
  const payload: Record<string, unknown> = { vaccine_name, status };
  const cvx = codingIn(im.vaccineCode, SYSTEMS.cvx)?.code;
  if (cvx) payload.cvx_code = cvx;
  const occurrence = dateOrInstant(im.occurrenceDateTime);
  if (occurrence) payload.occurrence_date = occurrence;
  else if (im.occurrenceDateTime) return unmappable(["occurrenceDateTime"], "needs a time zone (Z or an offset such as -04:00) after its time");
  const dose = im.protocolApplied?.find((p) => p.doseNumberPositiveInt !== undefined)?.doseNumberPositiveInt;
  if (dose !== undefined) payload.dose_number = dose;
  if (im.lotNumber) payload.lot_number = im.lotNumber;
  const manufacturer = nameOf(im.manufacturer, ctx);
  if (manufacturer) payload.manufacturer = manufacturer;
  const site = SITE[codeOf(im.site) ?? ""] ?? conceptText(im.site);
  if (site) payload.site = site;
  const route = ROUTE[codeOf(im.route) ?? ""] ?? conceptText(im.route);
  if (route) payload.route = route;
  // The administering practitioner (function AP) is the performer; else the first named.
  const administering = im.performer?.find((p) => codeOf(p.function) === "AP") ?? im.performer?.[0];
  const performer = clinicianOf(administering?.actor, ctx, conceptText(administering?.function));
  if (performer) payload.performer = performer;
  const timestamp = instantOf(im.occurrenceDateTime);
  return { ok: true, logs: [{ log_type: "immunization", ...(timestamp ? { timestamp } : {}), payload }] };
};

import type { Immunization } from "@medplum/fhirtypes";
import type { Immunization as StateImmunization } from "../../readmodels/modules/immunizations/index.js";
import { moduleEntry } from "../../readmodels/patient-state.js";
import { SYSTEMS } from "../lib/datatypes.js";
import { clinicianRef, compact, concept, detailText, fhirDateTime, mapped, patientRef, textConcept, type Mapped, type OutboundInput } from "./lib.js";

const STATUS: Record<string, Immunization["status"]> = { completed: "completed", not_done: "not-done" };

/**
 * A vaccine dose: the vaccine by CVX and name, when it was given, the dose number, and the
 * lot, manufacturer, site, route and performer the log sent (kept in the entry's details).
 * A dose entered in error is withdrawn and left out.
 */
export function immunizationResource(patientId: string, i: StateImmunization): Mapped<Immunization> | undefined {
  const status = STATUS[i.status ?? "completed"];
  if (status === undefined) return undefined;
  const d = i.details;
  const performer = clinicianRef(d.performer);
  const manufacturer = detailText(d, "manufacturer");
  const resource = compact<Omit<Immunization, "id">>({
    resourceType: "Immunization",
    status,
    vaccineCode: concept([i.cvx_code ? { system: SYSTEMS.cvx, code: i.cvx_code } : undefined], i.vaccine) ?? { text: "unknown" },
    patient: patientRef(patientId),
    occurrenceDateTime: fhirDateTime(i.administered_date),
    lotNumber: detailText(d, "lot_number"),
    manufacturer: manufacturer ? { display: manufacturer } : undefined,
    site: textConcept(detailText(d, "site")),
    route: textConcept(detailText(d, "route")),
    performer: performer ? [{ actor: performer }] : undefined,
    protocolApplied: i.dose_number !== null ? [{ doseNumberPositiveInt: i.dose_number }] : undefined,
  });
  return mapped<Immunization>(patientId, [i.key], resource, i.sources.map((s) => s.log_id), i.updated_at);
}

export function immunizationResources({ state, patient }: OutboundInput): Mapped<Immunization>[] {
  const list = moduleEntry(state, "immunizations")?.payload.immunizations ?? [];
  return list.map((i) => immunizationResource(patient.id, i)).filter((m): m is Mapped<Immunization> => m !== undefined);
}

import type { Procedure } from "@medplum/fhirtypes";
import type { Procedure as StateProcedure } from "../../readmodels/modules/procedures/index.js";
import { moduleEntry } from "../../readmodels/patient-state.js";
import { SYSTEMS } from "../lib/datatypes.js";
import { clinicianRef, compact, concept, detailText, fhirDateTime, mapped, patientRef, textConcept, type Mapped, type OutboundInput } from "./lib.js";

const STATUS: Record<string, Procedure["status"]> = {
  preparation: "preparation", in_progress: "in-progress", not_done: "not-done", on_hold: "on-hold", stopped: "stopped", completed: "completed",
};

/** A procedure's code_system as sent (cpt, snomed, icd10pcs, or a URI) → the FHIR system URI. */
export function procedureSystem(s: string | null): string | undefined {
  const k = (s ?? "").trim().toLowerCase().replace(/[\s_-]/g, "");
  if (k === "") return undefined;
  if (k === "cpt") return "http://www.ama-assn.org/go/cpt";
  if (k === "snomed" || k === "snomedct" || k === "sct") return SYSTEMS.snomed;
  if (k === "icd10pcs") return "http://www.cms.gov/Medicare/Coding/ICD10";
  if (k === "loinc") return SYSTEMS.loinc;
  return /^[a-z][a-z0-9+.-]*:/i.test(s!.trim()) ? s!.trim() : `urn:pss:code-system:${k}`;
}

/**
 * A procedure performed: its code (in the system it was sent in) and name, status, when,
 * body site, and the performer, outcome and reason the log sent. Entered in error is left out.
 */
export function procedureResource(patientId: string, p: StateProcedure): Mapped<Procedure> | undefined {
  const status = p.status === null ? "unknown" : STATUS[p.status];
  if (status === undefined) return undefined;
  const d = p.details;
  const performer = clinicianRef(d.performer);
  const reason = detailText(d, "reason");
  const resource = compact<Omit<Procedure, "id">>({
    resourceType: "Procedure",
    status,
    code: concept([p.code ? compact({ system: procedureSystem(p.code_system), code: p.code }) : undefined], p.name),
    subject: patientRef(patientId),
    performedDateTime: fhirDateTime(p.performed_at),
    performer: performer ? [{ actor: performer }] : undefined,
    reasonCode: reason ? [{ text: reason }] : undefined,
    bodySite: p.body_site ? [{ text: p.body_site }] : undefined,
    outcome: textConcept(detailText(d, "outcome")),
  });
  return mapped<Procedure>(patientId, [p.key], resource, p.sources.map((s) => s.log_id), p.updated_at);
}

export function procedureResources({ state, patient }: OutboundInput): Mapped<Procedure>[] {
  const list = moduleEntry(state, "procedures")?.payload.procedures ?? [];
  return list.map((p) => procedureResource(patient.id, p)).filter((m): m is Mapped<Procedure> => m !== undefined);
}

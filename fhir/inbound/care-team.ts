import type { CareTeam } from "@medplum/fhirtypes";
import { conceptText } from "../lib/datatypes.js";
import { clinicianOf, nameOf } from "../lib/people.js";
import { CARE_TEAM_STATUS, checkCode } from "../lib/statuses.js";
import { unmappable, type Mapper } from "../types.js";

/**
 * FHIR care-team-status → the action on each member. A suspended team is still the
 * patient's; an inactive one (or one entered in error) no longer is, so its members are
 * removed; a proposed team is not yet anyone's care team and maps to nothing.
 */
const ACTION: Record<string, "add" | "remove" | undefined> = {
  active: "add", suspended: "add", inactive: "remove", "entered-in-error": "remove", proposed: undefined,
};

/**
 * CareTeam → care_team, one member per participant, keyed by role and name as the module
 * keys them. The patient's own participation (US Core lists the patient) is left out:
 * the care team is who looks after the patient.
 */
export const mapCareTeam: Mapper<CareTeam> = (team, ctx) => {
  const status = checkCode(team.status, CARE_TEAM_STATUS, ["status"]);
  if (!status.ok) return { ok: false, issues: [status.issue] };
  const action = status.code === undefined ? "add" : ACTION[status.code];
  if (!action) return { ok: true, logs: [] };
  const managing = nameOf(team.managingOrganization?.[0], ctx);
  const members: Record<string, unknown>[] = [];
  for (const [i, p] of (team.participant ?? []).entries()) {
    if (p.member?.reference?.startsWith("Patient/")) continue;
    const role = conceptText(p.role?.[0]);
    if (!role) return unmappable(["participant", i, "role"], "is required: the catalog keys a care team member by role (for example a SNOMED CT or NUCC code, or text)");
    const who = clinicianOf(p.member, ctx);
    const organization = nameOf(p.onBehalfOf, ctx) ?? managing;
    members.push({ action, role, ...who, ...(organization && organization !== who?.name ? { organization } : {}) });
  }
  if (members.length === 0) return { ok: true, logs: [] };
  return { ok: true, logs: [{ log_type: "care_team", payload: { members } }] };
};

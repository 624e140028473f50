import type { Age, FamilyMemberHistory, FamilyMemberHistoryCondition } from "@medplum/fhirtypes";
import { codeOf, codesIn, codingIn, conceptText, snakeCase, SYSTEMS } from "../lib/datatypes.js";
import { checkCode, HISTORY_STATUS } from "../lib/statuses.js";
import { unmappable, type MapOutcome, type Mapper } from "../types.js";

/** FHIR history-status → the catalog's status. */
const STATUS: Record<string, string> = {
  partial: "partial", completed: "completed", "health-unknown": "health_unknown", "entered-in-error": "entered_in_error",
};

/**
 * v3 RoleCode family codes → the catalog's relationship words. The module keys a relative
 * by relationship, so a code and its spelled-out text must give the same word.
 */
const RELATIONSHIP: Record<string, string> = {
  MTH: "mother", NMTH: "mother", FTH: "father", NFTH: "father", SIS: "sister", NSIS: "sister", BRO: "brother", NBRO: "brother",
  HSIS: "half_sister", HBRO: "half_brother", SON: "son", DAU: "daughter", CHILD: "child", SIB: "sibling", PRN: "parent",
  TWIN: "twin", TWINSIS: "twin_sister", TWINBRO: "twin_brother",
  MGRMTH: "maternal_grandmother", MGRFTH: "maternal_grandfather", PGRMTH: "paternal_grandmother", PGRFTH: "paternal_grandfather",
  GRMTH: "grandmother", GRFTH: "grandfather", MAUNT: "maternal_aunt", MUNCLE: "maternal_uncle", PAUNT: "paternal_aunt",
  PUNCLE: "paternal_uncle", AUNT: "aunt", UNCLE: "uncle", COUSN: "cousin", NIECE: "niece", NEPHEW: "nephew",
};

/** An Age in years, from its UCUM unit (a, mo, wk, d). */
function years(age: Age | undefined): number | undefined {
  if (age?.value === undefined) return undefined;
  const per: Record<string, number> = { a: 1, mo: 12, wk: 365.25 / 7, d: 365.25 };
  const divisor = per[age.code ?? ""] ?? (/year/i.test(age.unit ?? "") ? 1 : undefined);
  return divisor === undefined ? undefined : Math.round((age.value / divisor) * 10) / 10;
}

function conditionOf(c: FamilyMemberHistoryCondition): Record<string, unknown> | undefined {
  const condition = conceptText(c.code);
  if (!condition) return undefined;
  const out: Record<string, unknown> = { condition };
  const snomed = codingIn(c.code, SYSTEMS.snomed)?.code;
  if (snomed) out.snomed_code = snomed;
  const [icd10] = codesIn(c.code, SYSTEMS.icd10, SYSTEMS.icd10cm);
  if (icd10) out.icd10_code = icd10;
  const onset = years(c.onsetAge);
  if (onset !== undefined) out.onset_age_years = onset;
  if (c.contributedToDeath !== undefined) out.contributed_to_death = c.contributedToDeath;
  return out;
}

/** FamilyMemberHistory → family_history: one relative with the conditions they had. */
export const mapFamilyMemberHistory: Mapper<FamilyMemberHistory> = (f): MapOutcome => {
  const relationship = RELATIONSHIP[codeOf(f.relationship) ?? ""] ?? snakeCase(conceptText(f.relationship));
  if (!relationship) return unmappable(["relationship"], "needs a v3 RoleCode or text saying how the relative is related to the patient");
  const status = checkCode(f.status, HISTORY_STATUS, ["status"]);
  if (!status.ok) return { ok: false, issues: [status.issue] };
  const payload: Record<string, unknown> = { relationship };
  if (f.name) payload.name = f.name;
  if (status.code) payload.status = STATUS[status.code];
  const sex = codeOf(f.sex);
  if (sex) payload.sex = sex;
  const deceased = f.deceasedBoolean ?? (f.deceasedAge ?? f.deceasedRange ?? f.deceasedDate ?? f.deceasedString ? true : undefined);
  if (deceased !== undefined) payload.deceased = deceased;
  const conditions: Record<string, unknown>[] = [];
  for (const [i, c] of (f.condition ?? []).entries()) {
    const mapped = conditionOf(c);
    if (!mapped) return unmappable(["condition", i, "code"], "needs a coding with a code or display, or text, naming the relative's condition");
    conditions.push(mapped);
  }
  if (conditions.length > 0) payload.conditions = conditions;
  return { ok: true, logs: [{ log_type: "family_history", payload }] };
};

/**
 * Keys of what FHIR-made logs keep under a payload's `extensions` (the catalog's open bag)
 * where the catalog has no field: written by the inbound mappers, read by the outbound
 * ones, so both spell them once.
 */
export const EXTENSION_KEYS = {
  /** Condition: when an ended condition abated (date or instant, as sent). */
  abatementDate: "abatement_date",
  /**
   * Condition: the code system of each ICD-10 code, `{ "E11.65": "http://hl7.org/fhir/sid/icd-10-cm" }`.
   * The catalog's icd10_codes are bare codes; ICD-10-CM and WHO ICD-10 are different systems.
   */
  icd10Systems: "icd10_code_systems",
} as const;

/** A string-valued map under an extension key (`{code: system}`), ignoring anything else a client may have put there. */
export function stringMap(v: unknown): Readonly<Record<string, string>> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return {};
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === "string"));
}

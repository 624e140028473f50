import type { CodeableConcept, Coding } from "@medplum/fhirtypes";

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
  /** AllergyIntolerance: the allergen's codings as sent (RxNorm, SNOMED CT, UNII...): the catalog keeps a SNOMED CT code alone. */
  allergenCodings: "allergen_codings",
  /** AllergyIntolerance: each reaction's manifestation codings, by the reaction's name in `reactions`. */
  reactionCodings: "reaction_codings",
  /** AllergyIntolerance: recordedDate as sent when it has a time (the catalog's recorded_date is a date). */
  recordedDateTime: "recorded_datetime",
  /** Condition, AllergyIntolerance: the verificationStatus code (confirmed, unconfirmed, provisional...). */
  verificationStatus: "verification_status",
  /** AllergyIntolerance: its type, allergy or intolerance. */
  allergyType: "allergy_type",
  /**
   * Patient: the given names and family of the name demographics' `name` was made from,
   * `{name, given: string[], family: string | null}`, all three always written (extensions
   * merge leaf by leaf); read only while `name` is still demographics' name.
   */
  nameParts: "name_parts",
} as const;

/** The core extension for when a condition was first asserted: the catalog's diagnosis_date. */
export const ASSERTED_DATE = "http://hl7.org/fhir/StructureDefinition/condition-assertedDate";

/** A coding as these extensions keep it: what identifies the code, nothing else. */
export interface KeptCoding {
  system?: string;
  code: string;
  display?: string;
}

/** A concept's codings that have a code, as KeptCoding. */
export function keptCodings(cc: CodeableConcept | undefined): KeptCoding[] {
  return (cc?.coding ?? []).flatMap((c) => (c.code ? [{ ...(c.system ? { system: c.system } : {}), code: c.code, ...(c.display ? { display: c.display } : {}) }] : []));
}

/** The codings kept under an extension key, ignoring anything else a client may have put there. */
export function codingsAt(v: unknown): Coding[] {
  if (!Array.isArray(v)) return [];
  const str = (x: unknown) => (typeof x === "string" && x ? x : undefined);
  return v.flatMap((c: Record<string, unknown>) => {
    const code = typeof c === "object" && c !== null ? str(c.code) : undefined;
    if (!code) return [];
    const system = str(c.system);
    const display = str(c.display);
    return [{ ...(system ? { system } : {}), code, ...(display ? { display } : {}) }];
  });
}

/** An object under an extension key, else an empty one. */
export function objectAt(v: unknown): Readonly<Record<string, unknown>> {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** A string-valued map under an extension key (`{code: system}`), ignoring anything else a client may have put there. */
export function stringMap(v: unknown): Readonly<Record<string, string>> {
  return Object.fromEntries(Object.entries(objectAt(v)).filter((e): e is [string, string] => typeof e[1] === "string"));
}

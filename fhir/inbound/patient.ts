import type { Address, Extension, Patient } from "@medplum/fhirtypes";
import { LANGUAGE_TAG_PATTERN } from "../../catalog/schemas/common.js";
import { codeOf, conceptText, currentName, humanName, instantOf } from "../lib/datatypes.js";
import { EXTENSION_KEYS } from "../lib/extensions.js";
import type { Mapper } from "../types.js";

const US_CORE = "http://hl7.org/fhir/us/core/StructureDefinition";
const LANGUAGE_TAG = new RegExp(LANGUAGE_TAG_PATTERN);

/** v3 MaritalStatus codes, for a status sent without text or display. */
const MARITAL: Record<string, string> = {
  A: "annulled", D: "divorced", I: "interlocutory", L: "legally separated", M: "married", C: "common law", P: "polygamous",
  T: "domestic partner", U: "unmarried", S: "never married", W: "widowed",
};

function addressOf(a: Address): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  const street = a.line?.filter((l) => l.trim()).join(", ");
  if (street) out.street = street;
  if (a.city) out.city = a.city;
  if (a.state) out.state = a.state;
  if (a.postalCode) out.zip = a.postalCode;
  if (a.country) out.country = a.country;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A US Core race or ethnicity extension as words: its text, else its OMB categories' displays. */
function usCoreText(extensions: Extension[] | undefined, name: string): string | undefined {
  const ext = extensions?.find((e) => e.url === `${US_CORE}/${name}`);
  const text = ext?.extension?.find((e) => e.url === "text")?.valueString;
  if (text?.trim()) return text.trim();
  const categories = ext?.extension?.filter((e) => e.url === "ombCategory").map((e) => e.valueCoding?.display ?? e.valueCoding?.code);
  return categories?.filter(Boolean).join(", ") || undefined;
}

/**
 * Patient → demographics, patch style. Elements marked `use: old` are left out: the
 * catalog's lists replace the ones on file, so only current names, addresses and contacts
 * are sent. A birthDate of only a year or month is left out (dob is a whole date), as is
 * `deceased[x]` (demographics has no place for it); both stay in fhir_resource. US Core
 * race has no typed field either, so it goes under extensions.
 */
export const mapPatient: Mapper<Patient> = (p) => {
  const payload: Record<string, unknown> = {};
  const name = humanName(p.name);
  const extensions: Record<string, unknown> = {};
  if (name) {
    payload.name = name;
    // demographics' name is one string: the parts go in extensions so given names come back out.
    const n = currentName(p.name)!;
    extensions[EXTENSION_KEYS.nameParts] = { name, given: (n.given ?? []).filter((g) => g.trim()), family: n.family?.trim() || null };
  }
  if (p.birthDate && /^\d{4}-\d{2}-\d{2}$/.test(p.birthDate)) payload.dob = p.birthDate;
  if (p.gender) payload.sex = p.gender;
  const marital = p.maritalStatus?.text ?? p.maritalStatus?.coding?.find((c) => c.display)?.display ?? MARITAL[codeOf(p.maritalStatus) ?? ""];
  if (marital) payload.marital_status = marital;
  const addresses = (p.address ?? []).filter((a) => a.use !== "old").map(addressOf).filter((a) => a !== undefined);
  if (addresses.length > 0) {
    // The single address is the home one, for readers of the older field; `addresses` supersedes it.
    const home = (p.address ?? []).filter((a) => a.use !== "old").findIndex((a) => a.use === "home");
    payload.address = addresses[Math.max(home, 0)];
    payload.addresses = addresses;
  }
  const telecom = (p.telecom ?? []).filter((t) => t.use !== "old" && t.value).map((t) => ({
    ...(t.system ? { system: t.system } : {}), value: t.value, ...(t.use ? { use: t.use } : {}), ...(t.rank ? { rank: t.rank } : {}),
  }));
  if (telecom.length > 0) payload.telecom = telecom;
  const identifiers = (p.identifier ?? []).filter((i) => i.value?.trim() && i.use !== "old").map((i) => {
    const type = conceptText(i.type);
    return { ...(i.system ? { system: i.system } : {}), value: i.value, ...(type ? { type } : {}) };
  });
  if (identifiers.length > 0) payload.identifiers = identifiers;
  const spoken = p.communication?.find((c) => c.preferred) ?? p.communication?.[0];
  const language = spoken?.language.coding?.map((c) => c.code).find((c) => c !== undefined && LANGUAGE_TAG.test(c));
  if (language) payload.language = language;
  const ethnicity = usCoreText(p.extension, "us-core-ethnicity");
  if (ethnicity) payload.ethnicity = ethnicity;
  const race = usCoreText(p.extension, "us-core-race");
  if (race) extensions.race = race;
  if (Object.keys(extensions).length > 0) payload.extensions = extensions;
  if (Object.keys(payload).length === 0) return { ok: true, logs: [] };
  // Demographics merge field by field, latest event time first: the time the source last
  // changed the record orders two versions of it, whatever order they arrive in.
  const timestamp = instantOf(p.meta?.lastUpdated);
  return { ok: true, logs: [{ log_type: "demographics", ...(timestamp ? { timestamp } : {}), payload }] };
};

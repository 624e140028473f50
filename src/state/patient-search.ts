import type { PatientStateStore } from "../../infra/redis/state-store.js";
import type { DemographicsDoc } from "../../readmodels/modules/demographics/index.js";
import { moduleEntry } from "../../readmodels/patient-state.js";
import { matchesIdentifier } from "../control/patient-records.js";
import type { ExternalIdentifier, Patient, PatientStore } from "../control/patients.js";

/** What a search asks for; every criterion given must hold (at least one is needed). */
export interface PatientSearch {
  identifier_system?: string;
  identifier_value?: string;
  name?: string;
  /** YYYY-MM-DD */
  date_of_birth?: string;
  /** Only patients whose id sorts after this one (the previous page's last). */
  after?: string;
  limit: number;
}

/** A patient found: enough to tell candidates apart, from the record and the compiled demographics. */
export interface PatientCandidate {
  patient_id: string;
  first_name: string | null;
  last_name: string | null;
  /** The name demographics logs recorded (the demographics stable module), when any. */
  demographics_name: string | null;
  /** The record's, else the demographics module's. */
  date_of_birth: string | null;
  sex: string | null;
  identifiers: ExternalIdentifier[];
  created_at: string;
}

/** Records (and their demographics) read at once while scanning a project, as the ingestion scan does. */
const SCAN_AT_ONCE = 50;

/** Letters without a decomposition NFKD could strip an accent from. */
const LETTERS: Record<string, string> = { ß: "ss", æ: "ae", œ: "oe", ø: "o", ł: "l", đ: "d", ð: "d", þ: "th", ı: "i" };

/**
 * A name as search compares it: lower case, accents dropped, apostrophes removed (O'Brien
 * and OBrien are one name), any other run of non-letters a single space.
 * "José O'Brien-Núñez" → "jose obrien nunez".
 */
export function foldName(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .replace(/[ßæœøłđðþı]/g, (c) => LETTERS[c]!)
    .replace(/['’ʼ`]/g, "")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/** Every word of the query begins a word of the name, in any order ("ana garc" finds "Ana María García"). */
function nameMatches(query: string[], name: string | null | undefined): boolean {
  if (!name) return false;
  const words = foldName(name).split(" ");
  return query.every((q) => words.some((w) => w.startsWith(q)));
}

const day = (d: string | null | undefined): string | undefined => (d ? d.slice(0, 10) : undefined);

function candidate(p: Patient, demo: DemographicsDoc | undefined): PatientCandidate {
  return {
    patient_id: p.id,
    first_name: p.first_name,
    last_name: p.last_name,
    demographics_name: demo?.name ?? null,
    date_of_birth: p.date_of_birth ?? demo?.dob ?? null,
    sex: p.sex ?? demo?.sex ?? null,
    identifiers: p.external_identifiers,
    created_at: p.created_at,
  };
}

/**
 * Finds a project's active patients by external identifier (the record's, exactly, as
 * GET /v1/patients filters), name and date of birth. Names and dates of birth are read from
 * the record and from the compiled demographics module, since a patient may be created
 * without them and named by a demographics log later. Candidates come in patient id order
 * (creation order), `limit` at a time; `more` says whether a next page holds any.
 *
 * The demographics are read as stored, without the read-your-writes wait of a state read:
 * a demographics log counts once it is applied (normally well within a second).
 */
export async function findPatients(
  deps: { patients: PatientStore; store: PatientStateStore },
  projectId: string,
  q: PatientSearch,
): Promise<{ candidates: PatientCandidate[]; more: boolean }> {
  const words = q.name === undefined ? [] : foldName(q.name).split(" ").filter((w) => w !== "");
  const byIdentifier = { system: q.identifier_system, value: q.identifier_value };
  const hasIdentifier = q.identifier_system !== undefined || q.identifier_value !== undefined;

  const matches = (p: Patient, demo: DemographicsDoc | undefined): boolean =>
    (words.length === 0 || nameMatches(words, [p.first_name, p.last_name].filter(Boolean).join(" ")) || nameMatches(words, demo?.name)) &&
    (q.date_of_birth === undefined || day(p.date_of_birth) === q.date_of_birth || day(demo?.dob) === q.date_of_birth);

  let ids: string[];
  if (q.identifier_system !== undefined && q.identifier_value !== undefined) {
    // The pair has at most one holder: the identifier index finds it without a scan.
    const holder = await deps.patients.findByExternalId(projectId, { system: q.identifier_system, value: q.identifier_value });
    ids = holder ? [holder.id] : [];
  } else {
    ids = (await deps.patients.list(projectId)).sort();
  }
  if (q.after !== undefined) ids = ids.filter((id) => id > q.after!);

  const found: PatientCandidate[] = [];
  for (let i = 0; i < ids.length && found.length <= q.limit; i += SCAN_AT_ONCE) {
    const records = await Promise.all(ids.slice(i, i + SCAN_AT_ONCE).map((id) => deps.patients.peek(projectId, id)));
    // The identifier is on the record: only those holding it need their demographics read.
    const kept = records.filter((p): p is Patient => p !== null && p.status === "active" && (!hasIdentifier || p.external_identifiers.some((e) => matchesIdentifier(byIdentifier, e))));
    const demos = await Promise.all(kept.map((p) => deps.store.loadModules(p.id, ["demographics"])));
    kept.forEach((p, k) => {
      const demo = demos[k] ? moduleEntry(demos[k].state, "demographics")?.payload : undefined;
      if (found.length <= q.limit && matches(p, demo)) found.push(candidate(p, demo));
    });
  }
  return { candidates: found.slice(0, q.limit), more: found.length > q.limit };
}

/**
 * Narrowing an event-state module to what a reader asked about: some entities (symptoms by
 * name, lab tests by LOINC code or name, medications by RxNorm code or name, vitals by
 * measurement, questionnaires by instrument) and the entries since a time. Pure: the
 * payload is the module's as compiled, and what comes back is a copy.
 */
import { isObj, type Obj } from "../../readmodels/lib/payload.js";

/** The fields that name an entity across modules; `aliases` and a vitals entry's measurement keys count too. */
const NAME_FIELDS = [
  "name", "test_name", "loinc_code", "medication_name", "rxnorm_cui", "medication_identifier", "snomed_code", "meddra_code",
  "instrument_id", "instrument_type", "kind",
] as const;

/** "Shortness of breath", "shortness_of_breath" and "SHORTNESS-OF-BREATH" are one name. */
export const entityKey = (s: string): string => s.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase().replace(/[\s_-]+/g, " ").trim();

function namesOf(item: Obj): string[] {
  const out: string[] = [];
  for (const f of NAME_FIELDS) if (typeof item[f] === "string") out.push(item[f]);
  if (Array.isArray(item.aliases)) for (const a of item.aliases) if (typeof a === "string") out.push(a);
  if (isObj(item.measurements)) out.push(...Object.keys(item.measurements));
  return out;
}

const named = (item: unknown): item is Obj => isObj(item) && namesOf(item).length > 0;

/** A map from entity name to a record (vitals' and heart's `latest`): every value a record or null. */
const isNamedMap = (v: unknown): v is Obj =>
  isObj(v) && Object.keys(v).length > 0 && Object.values(v).every((x) => x === null || isObj(x));

export interface EntityFilterResult {
  payload: unknown;
  /** The names asked for that matched nothing in the module, as given. */
  not_found: string[];
}

/**
 * Keeps, in each top-level list of the payload whose items are named, the items one of
 * `entities` names, and in each map by name (a `latest` per measurement) the keys named;
 * lists of unnamed items (daily rollups) stay whole.
 */
export function filterEntities(payload: unknown, entities: readonly string[]): EntityFilterResult {
  const wanted = new Map(entities.map((e) => [entityKey(e), e]));
  const found = new Set<string>();
  const hit = (names: string[]) => {
    let any = false;
    for (const n of names) {
      const k = entityKey(n);
      if (wanted.has(k)) {
        found.add(k);
        any = true;
      }
    }
    return any;
  };
  if (!isObj(payload)) return { payload, not_found: [...entities] };
  const out: Obj = {};
  for (const [key, value] of Object.entries(payload)) {
    if (Array.isArray(value) && value.some(named)) out[key] = value.filter((x) => named(x) && hit(namesOf(x)));
    else if (isNamedMap(value)) out[key] = Object.fromEntries(Object.entries(value).filter(([k]) => hit([k])));
    else out[key] = value;
  }
  return { payload: out, not_found: [...wanted].filter(([k]) => !found.has(k)).map(([, e]) => e) };
}

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Before `since`: an entry's timestamp as an instant; else a scheduled dose's
 * scheduled_time (adherence's `schedule[].doses`, laid out by the module rather than
 * reported, so they carry no event time of their own); else a daily rollup's `date`
 * against since's UTC date.
 */
function before(x: Obj, from: number, fromDay: string): boolean {
  if (typeof x.timestamp === "string") return Date.parse(x.timestamp) < from;
  if (typeof x.scheduled_time === "string") return Date.parse(x.scheduled_time) < from;
  return typeof x.date === "string" && DAY_RE.test(x.date) && x.date < fromDay;
}

/**
 * Leaves out every dated entry (a record with a `timestamp`, a scheduled dose with a
 * `scheduled_time`, or a daily rollup with a `date`, at any depth of the payload) before
 * `since`; the entities holding them stay, with their current status and counts.
 * Timestamps compare as instants, so offsets and fractions do not matter; a rollup's day
 * (the patient's calendar day) compares with since's UTC date.
 */
export function filterSince(payload: unknown, since: string): unknown {
  const from = Date.parse(since);
  const fromDay = new Date(from).toISOString().slice(0, 10);
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.filter((x) => !(isObj(x) && before(x, from, fromDay))).map(walk);
    if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(payload);
}

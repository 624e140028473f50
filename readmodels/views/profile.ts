/** profile_snapshot: the stable profile, one long_term block per topic, and the essentials still missing. */
import type { Allergy } from "../modules/allergies/index.js";
import type { Condition } from "../modules/condition_diagnosis/index.js";
import type { Address, DemographicsDoc } from "../modules/demographics/index.js";
import type { Device } from "../modules/devices/index.js";
import type { Relative } from "../modules/family_history/index.js";
import type { Immunization } from "../modules/immunizations/index.js";
import { cmpTime } from "../lib/time.js";
import { lastEncounterBlock } from "./encounter.js";
import { moduleEntry, type PatientState } from "../patient-state.js";
import { block, calendarDate, clean, doc, entry, parts, sourceIds, words } from "./lib.js";
import type { RecentEntry, ViewBlock, ViewDef, Window } from "./types.js";

const PROFILE_INPUTS = [
  "demographics", "condition_diagnosis", "allergies", "care_team", "emergency_contact", "insurance", "pharmacy",
  "user_preferences", "social", "immunizations", "family_history", "devices", "clinical_context",
] as const;

const field = (label: string, v: unknown) => (v === undefined || v === null || v === "" ? null : `**${label}**: ${clean(v, 120)}`);
const join = (xs: readonly unknown[], sep = ", ") => parts(...xs).map((x) => clean(x, 80)).join(sep);
const address = (a: Address | null | undefined) => (a ? join([a.street, a.city, join([a.state, a.zip], " "), a.country]) : "");
const onOff = (label: string, v: boolean | undefined) => (v === undefined ? null : `${label} ${v ? "on" : "off"}`);

/**
 * The catalog: `addresses` supersedes the single `address`. Both may be on file (a client
 * still sending the legacy field), so the one written later by event time is current, the
 * list on a tie; the field clocks hold when each was last written.
 */
function listSupersedes(state: PatientState): boolean {
  const clocks = moduleEntry(state, "demographics")?.clocks ?? {};
  const single = clocks[JSON.stringify(["address"])];
  const list = clocks[JSON.stringify(["addresses"])];
  return single === undefined || list === undefined || cmpTime(list, single) >= 0;
}

function demographics(state: PatientState, w: Window): ViewBlock[] {
  const logged = doc(state, "demographics");
  // The patient record's date of birth stands in for the one no demographics log gave.
  const recordDob = logged?.dob ? null : state.date_of_birth;
  if (!logged && !recordDob) return [];
  const d: DemographicsDoc = logged ?? { sources: [], extensions: {} };
  const telecom = (d.telecom ?? []).map((t) => join([t.value, join([t.system, t.use], " ")], " "));
  const { sources: _s, extensions: _e, address: single, addresses: list, ...rest } = d;
  const useList = list !== undefined && (single === undefined || listSupersedes(state));
  const dob = d.dob ?? recordDob;
  const text = parts(
    field("Name", d.name), dob && `**Date of birth**: ${calendarDate(dob, w.tz)}${recordDob ? " (patient record)" : ""}`, field("Sex", d.sex),
    field("Marital status", d.marital_status), field("Language", d.language), field("Ethnicity", d.ethnicity),
    field("Address", useList ? join(list.map(address), "; ") : address(single)),
    field("Phone", d.phone), field("Email", d.email), field("Contact", telecom.join("; ")),
    field("Identifiers", join((d.identifiers ?? []).map((i) => `${i.type ?? i.system ?? "id"} ${i.value}`), "; ")),
  );
  const own = recordDob ? { ...rest, dob: recordDob, dob_source: "patient_record" } : rest;
  const data = useList ? { ...own, addresses: list } : single === undefined ? own : { ...own, address: single };
  return block("demographics", "Demographics", "long_term", text, sourceIds(d), data);
}

function conditionLine(c: Condition, tz: string): string {
  const name = clean(c.disease_type ?? c.icd10_codes?.[0] ?? c.snomed_code ?? "unnamed condition", 80);
  const codes = join([c.icd10_codes?.length && `ICD-10 ${c.icd10_codes.join(", ")}`, c.snomed_code && `SNOMED ${c.snomed_code}`], "; ");
  const facts = join([
    words(c.status), c.stage && `stage ${c.stage}`, c.diagnosis_date && `diagnosed ${calendarDate(c.diagnosis_date, tz)}`, c.onset_date && `onset ${calendarDate(c.onset_date, tz)}`,
  ]);
  return `**${name}**${c.is_primary ? " (primary)" : ""}: ${facts}${codes ? ` (${codes})` : ""}`;
}

function conditions(state: PatientState, w: Window): ViewBlock[] {
  const d = doc(state, "condition_diagnosis");
  if (!d) return [];
  const list = d.conditions.filter((c) => c.status !== "entered_in_error");
  const text = list.map((c) => conditionLine(c, w.tz));
  const tp = d.treatment_phase;
  const phase = tp.current === null ? [] : tp.history.slice(-1);
  if (tp.current !== null) {
    const since = tp.effective_date ? ` since ${calendarDate(tp.effective_date, w.tz)}` : "";
    text.push(`**Treatment phase**: ${words(tp.current)}${since}${tp.changed_by ? ` (set by ${clean(tp.changed_by, 40)})` : ""}`);
  }
  const ids = [...list.flatMap((c) => [...sourceIds(c), ...c.history.map((h) => h.log_id)]), ...phase.map((h) => h.log_id)];
  return block("conditions", "Conditions and treatment phase", "long_term", text, ids, {
    conditions: list.map(({ sources: _s, extensions: _e, history: _h, ...c }) => c),
    treatment_phase: tp.current === null ? null : { current: tp.current, effective_date: tp.effective_date, changed_by: tp.changed_by },
  });
}

const allergyLine = (a: Allergy) => `**${clean(a.allergen ?? a.snomed_code ?? "unnamed", 80)}**${a.category ? ` (${words(a.category)})` : ""}: ${join([
  words(a.status), a.criticality && `${words(a.criticality)} criticality`, a.reactions?.length && `reactions: ${a.reactions.join(", ")}`,
])}`;

const immunizationLine = (i: Immunization, tz: string) => `**${clean(i.vaccine ?? (i.cvx_code ? `CVX ${i.cvx_code}` : "vaccine"), 80)}**: ${join([
  i.administered_date && calendarDate(i.administered_date, tz), i.dose_number !== null && `dose ${i.dose_number}`, i.status && words(i.status),
  i.vaccine && i.cvx_code && `CVX ${i.cvx_code}`,
])}`;

function relativeLine(r: Relative): string {
  const conds = (r.conditions ?? []).map((c) =>
    `${c.condition}${c.onset_age_years !== null ? ` (onset age ${c.onset_age_years})` : ""}${c.contributed_to_death ? " (contributed to death)" : ""}`);
  const who = `**${words(r.relationship ?? "relative")}**${r.name ? ` (${clean(r.name, 40)})` : ""}`;
  return `${who}: ${join([conds.join("; ") || "no conditions listed", r.deceased && "deceased"])}`;
}

const deviceLine = (x: Device) => `**${clean(x.name ?? x.model ?? x.device_type ?? "device", 80)}**: ${join([
  x.device_type && words(x.device_type), x.manufacturer, x.model !== x.name && x.model, x.device_id && `id ${x.device_id}`, x.status && words(x.status),
])}`;

/** A multi-entry module as one block: one bullet per entry, refs from the entries' sources. */
function entryBlock<E extends { sources: { log_id: string }[]; extensions: object }>(
  id: string, name: string, list: readonly E[] | undefined, line: (e: E) => string,
): ViewBlock[] {
  const es = list ?? [];
  return block(id, name, "long_term", es.map(line), es.flatMap((e) => e.sources.map((s) => s.log_id)),
    es.map(({ sources: _s, extensions: _e, ...rest }) => rest));
}

function patchBlock(id: string, name: string, d: ({ sources: { log_id: string }[] } & object) | undefined, text: string[]): ViewBlock[] {
  if (!d) return [];
  const { sources: _s, extensions: _e, ...data } = d as { sources: unknown; extensions?: unknown } & Record<string, unknown>;
  return block(id, name, "long_term", text, d.sources.map((s) => s.log_id), data);
}

function blocks(state: PatientState, w: Window): ViewBlock[] {
  const prefs = doc(state, "user_preferences");
  const social = doc(state, "social");
  const contacts = doc(state, "emergency_contact")?.contacts ?? [];
  const allergies = doc(state, "allergies")?.allergies ?? [];
  const conds = (doc(state, "condition_diagnosis")?.conditions ?? []).filter((c) => c.status !== "entered_in_error");
  const np = prefs?.notification_preferences ?? {};
  const missing = [
    !(doc(state, "demographics")?.dob ?? state.date_of_birth) && ["date_of_birth", "No date of birth on file: ask for it"],
    contacts.length === 0 && ["emergency_contact", "No emergency contact on file: ask for one"],
    allergies.length === 0 && ["allergies", "No allergy information on file: ask about allergies (or confirm none are known)"],
    !conds.some((c) => c.is_primary === true) && ["primary_condition", "No primary condition recorded: ask which condition is the primary one"],
  ].filter((x): x is [string, string] => Array.isArray(x));
  return [
    ...demographics(state, w),
    ...conditions(state, w),
    ...lastEncounterBlock(state, w),
    ...entryBlock("allergies", "Allergies", allergies, allergyLine),
    ...entryBlock("care_team", "Care team", doc(state, "care_team")?.members, (m) =>
      `**${words(m.role)}**: ${join([m.name ?? "unnamed", m.npi && `NPI ${m.npi}`, m.organization])}`),
    ...entryBlock("emergency_contacts", "Emergency contacts", contacts, (c) =>
      `**${clean(c.name, 80)}**${c.relationship ? ` (${clean(c.relationship, 40)})` : ""}${c.phone || c.email ? `: ${join([c.phone, c.email])}` : ""}`),
    ...entryBlock("insurance", "Insurance", doc(state, "insurance")?.plans, (p) => `**${words(p.rank ?? "primary")}**: ${
      join([p.payer, p.plan_name, p.member_id && `member ${p.member_id}`, p.group_id && `group ${p.group_id}`]) || "no details"}`),
    ...entryBlock("pharmacy", "Pharmacy", doc(state, "pharmacy")?.pharmacies, (p) =>
      `**${words(p.type ?? "pharmacy")}**: ${join([p.name, address(p.address), p.phone]) || "no details"}`),
    ...patchBlock("preferences", "Preferences", prefs, prefs ? parts(
      field("Reading level", prefs.reading_level), field("Tone", prefs.tone), field("Comfort with technology", prefs.comfort_with_technology),
      field("Energy level", prefs.energy_level), field("Diet", prefs.dietary_preferences?.join(", ")),
      field("Wants help managing", prefs.symptoms_need_help_managing?.join(", ")), field("Tracks", prefs.things_to_track?.join(", ")),
      field("Notifications", join([onOff("push", np.push), onOff("email", np.email), onOff("sms", np.sms)])),
    ) : []),
    ...patchBlock("social_determinants", "Social determinants", social, social ? parts(
      field("Living situation", social.living_situation), field("Support system", social.support_system),
      field("Transportation", social.transportation_access), field("Employment", social.employment_status), field("Housing", social.housing_stability),
    ) : []),
    ...entryBlock("immunizations", "Immunizations", doc(state, "immunizations")?.immunizations, (i) => immunizationLine(i, w.tz)),
    ...entryBlock("family_history", "Family history", doc(state, "family_history")?.relatives, relativeLine),
    ...entryBlock("devices", "Devices", doc(state, "devices")?.devices, deviceLine),
    ...block("missing_essentials", "Missing essentials to ask", "temp", missing.map(([, q]) => q), [], missing.map(([what, ask]) => ({ missing: what, ask }))),
  ];
}

function entries(state: PatientState): RecentEntry[] {
  const out: RecentEntry[] = [];
  const add = (module_type: RecentEntry["module_type"], kind: string, summary: string, sources: readonly { log_id: string; timestamp: string }[]) => {
    for (const s of sources) out.push({ timestamp: s.timestamp, module_type, kind, summary: clean(summary, 120), log_id: s.log_id });
  };
  const d = doc(state, "demographics");
  if (d) add("demographics", "demographics", "demographics updated", d.sources);
  const cd = doc(state, "condition_diagnosis");
  for (const c of cd?.conditions ?? []) {
    const name = c.disease_type ?? "condition";
    for (const h of c.history) out.push(entry("condition_diagnosis", "condition", h, join([name, h.status, h.stage && `stage ${h.stage}`], " ")));
  }
  for (const h of cd?.treatment_phase.history ?? []) out.push(entry("condition_diagnosis", "treatment_phase", h, `treatment phase ${h.new_phase}`));
  for (const a of doc(state, "allergies")?.allergies ?? []) add("allergies", "allergy_intolerance", `allergy ${a.allergen ?? a.snomed_code}`, a.sources);
  for (const m of doc(state, "care_team")?.members ?? []) add("care_team", "care_team", `care team ${m.role} ${m.name ?? ""}`, m.sources);
  for (const c of doc(state, "emergency_contact")?.contacts ?? []) add("emergency_contact", "emergency_contact", `emergency contact ${c.name}`, c.sources);
  for (const p of doc(state, "insurance")?.plans ?? []) add("insurance", "insurance", `insurance ${p.rank ?? "primary"} ${p.payer ?? ""}`, p.sources);
  for (const p of doc(state, "pharmacy")?.pharmacies ?? []) add("pharmacy", "pharmacy", `pharmacy ${p.name ?? p.type ?? ""}`, p.sources);
  const prefs = doc(state, "user_preferences");
  if (prefs) add("user_preferences", "preferences", "preferences updated", prefs.sources);
  const social = doc(state, "social");
  if (social) add("social", "social_determinants", "social determinants updated", social.sources);
  for (const i of doc(state, "immunizations")?.immunizations ?? []) add("immunizations", "immunization", `immunization ${i.vaccine ?? i.cvx_code ?? ""}`, i.sources);
  for (const r of doc(state, "family_history")?.relatives ?? []) add("family_history", "family_history", `family history ${r.relationship ?? ""}`, r.sources);
  for (const x of doc(state, "devices")?.devices ?? []) add("devices", "device", `device ${x.name ?? x.device_type ?? x.key}`, x.sources);
  return out;
}

export const profileSnapshot: ViewDef = { type: "profile_snapshot", title: "Profile snapshot", inputs: PROFILE_INPUTS, blocks, entries };

import type { Static } from "@sinclair/typebox";
import { eachItem, entry, issue, type CatalogEntry, type PayloadIssue } from "../issues.js";
import type { LOG_GROUPS } from "../log-types.js";
import {
  Address, Bool, DateOrDateTimeStr, DateStr, DateTimeStr, Entries, Enum, EntryAction, Extensions, Int, LanguageTag, List,
  Obj, Opt, ReqStr, Source, Str, Strings, extensible,
} from "./common.js";
import { designedProfileEntries } from "./profile-design.js";

const addByDefault = (what: string) =>
  Opt(EntryAction({ default: "add", description: `add (default), update or remove (alias delete); remove deletes the matching ${what}` }));

export const Demographics = Obj(
  {
    name: Opt(Str()),
    dob: Opt(DateStr({ description: "Date of birth, YYYY-MM-DD" })),
    sex: Opt(Str()),
    marital_status: Opt(Str()),
    address: Opt(Address),
    phone: Opt(Str({ description: "Legacy scalar, superseded by telecom; still accepted" })),
    email: Opt(Str({ description: "Legacy scalar, superseded by telecom; still accepted" })),
    telecom: Opt(
      List(
        Obj({
          system: Opt(Str({ description: "Such as phone, email, fax, sms" })),
          value: Opt(Str()),
          use: Opt(Str({ description: "Such as home, work, mobile" })),
          rank: Opt(Int({ minimum: 1, description: "1 is most preferred" })),
        }),
      ),
    ),
    addresses: Opt(List(Address, { description: "Supersedes address" })),
    identifiers: Opt(List(Obj({ system: Opt(Str()), value: ReqStr(), type: Opt(Str({ description: "Such as MRN, NPI, MBI" })) }))),
    language: Opt(LanguageTag()),
    ethnicity: Opt(Str()),
    ...extensible,
  },
  { description: "Patch style: merged field by field, latest event timestamp wins." },
);

const ConditionFields = {
  disease_type: Opt(Str()),
  stage: Opt(Str()),
  diagnosis_date: Opt(DateTimeStr({ description: "ISO 8601 datetime" })),
  icd10_codes: Opt(Strings()),
  clinical_status: Opt(Enum(["active", "resolved", "remission", "inactive", "entered_in_error"])),
  snomed_code: Opt(Str()),
  onset_date: Opt(DateOrDateTimeStr()),
  recorded_at: Opt(DateOrDateTimeStr()),
};
const NAMES_CONDITION = "Each condition is named by disease_type, snomed_code or icd10_codes.";

export const Condition = Obj(
  {
    ...ConditionFields,
    is_primary: Opt(Bool()),
    conditions: Opt(List(Obj({ ...ConditionFields, extensions: Opt(Extensions) }), { description: `Multi-condition payloads. ${NAMES_CONDITION}` })),
    ...extensible,
  },
  { description: `Active and past conditions. ${NAMES_CONDITION} Supersedes the legacy condition_updated type.` },
);

type ConditionLike = { disease_type?: string; snomed_code?: string; icd10_codes?: string[] };
const named = (c: ConditionLike) => Boolean(c.disease_type || c.snomed_code || (c.icd10_codes && c.icd10_codes.length > 0));
const NOT_NAMED = "is required when neither snomed_code nor icd10_codes names the condition";

export function refineCondition(p: Static<typeof Condition>): PayloadIssue[] {
  const list = p.conditions ?? [];
  if (list.length === 0 && !named(p)) return [issue(["disease_type"], `${NOT_NAMED} (and no conditions are listed)`, undefined)];
  return eachItem(list, ["conditions"], (c, path) => (named(c) ? [] : [issue([...path, "disease_type"], NOT_NAMED, undefined)]));
}

export const Preferences = Obj(
  {
    reading_level: Opt(Str()),
    tone: Opt(Str()),
    comfort_with_technology: Opt(Str()),
    energy_level: Opt(Str()),
    dietary_preferences: Opt(Strings()),
    symptoms_need_help_managing: Opt(Strings()),
    things_to_track: Opt(Strings()),
    notification_preferences: Opt(Obj({ push: Opt(Bool()), email: Opt(Bool()), sms: Opt(Bool()) })),
    ...extensible,
  },
  { description: "Patch style." },
);

export const EmergencyContact = Obj(
  {
    name: Opt(Str({ description: "Identity of the contact; required for action remove" })),
    relationship: Opt(Str()),
    phone: Opt(Str()),
    email: Opt(Str()),
    action: addByDefault("contact (by name)"),
    ...extensible,
  },
  { description: "Patch style; contacts are identified by name." },
);

export function refineEmergencyContact(p: Static<typeof EmergencyContact>): PayloadIssue[] {
  return (p.action === "remove" || p.action === "delete") && !p.name ? [issue(["name"], "is required to remove an emergency contact (contacts are matched by name)", p.name)] : [];
}

export const CareTeam = Obj({
  members: Entries(
    Obj({
      action: EntryAction({ description: "Members are matched by role and name" }),
      role: ReqStr(),
      name: Opt(Str()),
      npi: Opt(Str()),
      organization: Opt(Str()),
      extensions: Opt(Extensions),
    }),
  ),
  ...extensible,
});

export const Insurance = Obj(
  {
    payer: Opt(Str()),
    plan_name: Opt(Str()),
    member_id: Opt(Str()),
    group_id: Opt(Str()),
    rank: Opt(Enum(["primary", "secondary"], { description: "Identity of the plan; omit for a single plan" })),
    action: addByDefault("plan (by rank)"),
    ...extensible,
  },
  { description: "Patch style." },
);

export const SocialDeterminants = Obj(
  {
    living_situation: Opt(Str()),
    support_system: Opt(Str()),
    transportation_access: Opt(Str()),
    employment_status: Opt(Str()),
    housing_stability: Opt(Str()),
    ...extensible,
  },
  { description: "Patch style." },
);

export const Pharmacy = Obj(
  {
    name: Opt(Str()),
    address: Opt(Address),
    phone: Opt(Str()),
    type: Opt(Enum(["retail", "mail_order"], { description: "Identity of the pharmacy entry" })),
    action: addByDefault("pharmacy (by type)"),
    ...extensible,
  },
  { description: "Patch style." },
);

export const TreatmentPhase = Obj(
  {
    previous_phase: Opt(Str({ description: "Omit for the first transition" })),
    new_phase: Enum(["active_treatment", "surveillance", "palliative", "remission"]),
    effective_date: DateStr(),
    changed_by: Enum(["clinician", "system"]),
    source: Opt(Source),
  },
  { description: "Triggers downstream effects." },
);

export const AllergyIntolerance = Obj({
  allergies: Entries(
    Obj({
      allergen: ReqStr({ description: "Identity when snomed_code is unset" }),
      category: Opt(Enum(["food", "medication", "environment", "biologic", "other"])),
      criticality: Opt(Enum(["high", "low", "unable_to_assess"])),
      clinical_status: Opt(Enum(["active", "inactive", "resolved"])),
      reactions: Opt(Strings()),
      snomed_code: Opt(Str({ description: "Preferred identity" })),
      recorded_date: Opt(DateStr()),
      action: Opt(EntryAction({ default: "add", description: "Incremental update of the matching allergy" })),
      extensions: Opt(Extensions),
    }),
  ),
  ...extensible,
});

export const profileEntries = {
  demographics: entry(Demographics),
  condition: entry(Condition, refineCondition),
  preferences: entry(Preferences),
  emergency_contact: entry(EmergencyContact, refineEmergencyContact),
  care_team: entry(CareTeam),
  insurance: entry(Insurance),
  social_determinants: entry(SocialDeterminants),
  pharmacy: entry(Pharmacy),
  treatment_phase: entry(TreatmentPhase),
  allergy_intolerance: entry(AllergyIntolerance),
  ...designedProfileEntries,
} satisfies Record<(typeof LOG_GROUPS)["profile"][number], CatalogEntry>;

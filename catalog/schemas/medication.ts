import type { Static } from "@sinclair/typebox";
import { eachItem, entry, issue, type CatalogEntry, type PayloadIssue } from "../issues.js";
import type { LOG_GROUPS } from "../log-types.js";
import { Amount, Count, DateStr, DateTimeStr, Entries, Enum, Extensions, List, Obj, Opt, ReqStr, Str, TimeOfDay, extensible } from "./common.js";

const IDENTITY = "Identity: rxnorm_cui (preferred), else medication_name; one of them is required.";
const identity = {
  rxnorm_cui: Opt(Str({ description: "Preferred identity; medication_name is resolved server side" })),
  medication_name: Opt(Str({ description: "Fallback identity when rxnorm_cui is absent" })),
};
const hasIdentity = (m: { rxnorm_cui?: string; medication_name?: string }) => Boolean(m.rxnorm_cui || m.medication_name);

export const MedicationAdherence = Obj({
  medication_adherence: Entries(
    Obj(
      {
        status: Enum(["taken", "skipped"]),
        ...identity,
        scheduled_time: Opt(DateTimeStr({ description: "ISO 8601 UTC; enables timing deviation" })),
        dose_amount: Opt(Amount()),
        dose_unit: Opt(Str()),
        extensions: Opt(Extensions),
      },
      { description: IDENTITY },
    ),
  ),
  ...extensible,
});

export function refineAdherence(p: Static<typeof MedicationAdherence>): PayloadIssue[] {
  return eachItem(p.medication_adherence, ["medication_adherence"], (m, path) =>
    hasIdentity(m) ? [] : [issue([...path, "medication_name"], "is required when rxnorm_cui is absent: a dose must name its medication", undefined)],
  );
}

export const MedicationListUpdate = Obj({
  medications: Entries(
    Obj(
      {
        action: Enum(["add", "update", "delete", "remove"], { description: "delete (or remove, its alias) needs only an identifier (rxnorm_cui or medication_name); add and update need one too" }),
        ...identity,
        ndc_code: Opt(Str({ description: "Package level; not used for identity matching" })),
        dose: Opt(Str({ description: "Dose with unit text" })),
        dose_unit: Opt(Str()),
        frequency: Opt(Str({ description: "For example QD, BID, TID, once weekly" })),
        route: Opt(Str()),
        form: Opt(Str({ description: "Empty string or omitted when unknown" })),
        therapeutic_class: Opt(Str()),
        start_date: Opt(DateStr()),
        schedule_times: Opt(List(TimeOfDay(), { description: "Daily times HH:MM; required to activate adherence tracking" })),
        adherence_window_minutes: Opt(Count({ default: 60, description: "Minutes around the scheduled time counted as on time" })),
        prescribed_by: Opt(Obj({ name: Opt(Str()), npi: Opt(Str()) })),
        extensions: Opt(Extensions),
      },
      { description: IDENTITY },
    ),
  ),
  ...extensible,
});

export function refineMedicationList(p: Static<typeof MedicationListUpdate>): PayloadIssue[] {
  return eachItem(p.medications, ["medications"], (m, path) => {
    if (hasIdentity(m)) return [];
    const message =
      m.action === "delete" || m.action === "remove"
        ? `is required when rxnorm_cui is absent: ${m.action} needs an identifier (rxnorm_cui or medication_name)`
        : `is required when rxnorm_cui is absent: ${m.action} needs medication_name or rxnorm_cui`;
    return [issue([...path, "medication_name"], message, undefined)];
  });
}

export const MedicationAdverseEvent = Obj({
  events: Entries(
    Obj({
      medication_identifier: ReqStr({ description: "RxNorm CUI or medication name" }),
      description: Opt(Str()),
      severity: Opt(Str({ description: "For example mild, moderate, severe" })),
      onset_date: Opt(DateStr()),
      recorded_at: Opt(DateTimeStr()),
      extensions: Opt(Extensions),
    }),
  ),
  ...extensible,
});

export const medicationEntries = {
  medication_adherence: entry(MedicationAdherence, refineAdherence),
  medication_list_update: entry(MedicationListUpdate, refineMedicationList),
  medication_adverse_event: entry(MedicationAdverseEvent),
} satisfies Record<(typeof LOG_GROUPS)["medication"][number], CatalogEntry>;

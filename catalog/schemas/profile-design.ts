/**
 * The three profile types the spec only names. Their shapes are this service's design:
 * small and FHIR-inspired (Immunization, FamilyMemberHistory, Device). They use a
 * FHIR-style `status` (with entered_in_error as the correction) rather than an
 * add/update/remove action, and each has one identity rule.
 */
import { entry, type CatalogEntry } from "../issues.js";
import { Amount, Bool, Clinician, DateOrDateTimeStr, Enum, Int, List, Obj, Opt, ReqStr, Str, extensible } from "./common.js";

export const Immunization = Obj(
  {
    vaccine_name: ReqStr({ description: "Identity with cvx_code: code when set, else normalized name, plus occurrence_date" }),
    cvx_code: Opt(Str({ description: "CDC CVX vaccine code; preferred identity" })),
    status: Enum(["completed", "not_done", "entered_in_error"]),
    occurrence_date: Opt(DateOrDateTimeStr({ description: "When the dose was given" })),
    dose_number: Opt(Int({ minimum: 1, description: "Dose number within the series, 1-based" })),
    lot_number: Opt(Str()),
    manufacturer: Opt(Str()),
    site: Opt(Str({ description: "For example left_deltoid" })),
    route: Opt(Str({ description: "For example intramuscular, subcutaneous, intranasal, oral" })),
    performer: Opt(Clinician),
    ...extensible,
  },
  { description: "Service design: one vaccine dose given (or recorded as not given) (FHIR Immunization)." },
);

export const FamilyHistory = Obj(
  {
    relationship: ReqStr({ description: "Relative's relationship to the patient, for example mother, father, sister, maternal_grandmother; identity with name" }),
    name: Opt(Str({ description: "Distinguishes relatives with the same relationship" })),
    status: Opt(Enum(["partial", "completed", "health_unknown", "entered_in_error"], { default: "completed" })),
    sex: Opt(Str()),
    deceased: Opt(Bool()),
    conditions: Opt(
      List(
        Obj({
          condition: ReqStr({ description: "Condition name" }),
          snomed_code: Opt(Str()),
          icd10_code: Opt(Str()),
          onset_age_years: Opt(Amount()),
          contributed_to_death: Opt(Bool()),
        }),
      ),
    ),
    ...extensible,
  },
  { description: "Service design: the health history of one relative (FHIR FamilyMemberHistory). Identity: relationship and name; the latest log replaces the relative's entry." },
);

export const Device = Obj(
  {
    device_id: ReqStr({ description: "Identity: serial number, UDI or the client's own id" }),
    device_type: ReqStr({ description: "Client-defined, for example cgm, insulin_pump, pacemaker, wearable, blood_pressure_monitor, scale" }),
    status: Enum(["active", "inactive", "entered_in_error"]),
    manufacturer: Opt(Str()),
    model: Opt(Str()),
    udi: Opt(Str({ description: "Unique Device Identifier" })),
    device_provider: Opt(Str({ description: "Data provider it syncs through (garmin, fitbit, apple_health), linking it to passive data" })),
    start_date: Opt(DateOrDateTimeStr({ description: "When the patient started using it (or implant date)" })),
    end_date: Opt(DateOrDateTimeStr()),
    ...extensible,
  },
  { description: "Service design: a medical device or wearable the patient uses or has implanted (FHIR Device + DeviceUseStatement)." },
);

export const designedProfileEntries = {
  immunization: entry(Immunization),
  family_history: entry(FamilyHistory),
  device: entry(Device),
} satisfies Record<string, CatalogEntry>;

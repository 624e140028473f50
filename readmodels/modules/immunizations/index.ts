import type { LogPayloads } from "../../../catalog/payloads.js";
import { applyOpen, itemsOf, type OpenEntry } from "../../lib/open-entries.js";
import { finite, firstStr, normName, str, text, type Obj } from "../../lib/payload.js";
import { withDoc, type ReadModel } from "../../module.js";

/** key: `<cvx_code, else normalized vaccine>@<occurrence date>` (one entry per dose); status entered_in_error withdraws it. */
export interface Immunization extends OpenEntry {
  vaccine: string | null;
  cvx_code: string | null;
  /** ISO 8601 date (or datetime as sent); the log's date when the payload has none. */
  administered_date: string | null;
  dose_number: number | null;
  status: string | null;
}

/** Immunizations given, one entry per vaccine dose; removed ones are not listed. */
export interface ImmunizationsDoc {
  immunizations: Immunization[];
}

/**
 * A dose as a log sends it: the payload, or each item of an `immunizations` or `vaccines`
 * list (forms the catalog does not name, which stored logs may hold), read by the same names.
 * A field is read by the catalog's name and by the other names clients send it under, first
 * present wins: the catalog does not name those, so they are read by key.
 */
type DoseItem = Obj & Partial<LogPayloads["immunization"]>;

const VACCINE_ALIASES = ["vaccine", "name", "display", "vaccine_display"];
const CODE_ALIASES = ["vaccine_code", "code"];
const DATE_ALIASES = ["date_administered", "administered_at", "date"];
/** Every name the dose's fields are read from, so none is repeated under details. */
const CONSUMED = [
  "vaccine_name", ...VACCINE_ALIASES, "cvx_code", ...CODE_ALIASES, "administered_date", "occurrence_date", ...DATE_ALIASES, "dose_number", "status",
];

export const handles = ["immunization"] as const;

export const immunizations: ReadModel<"immunizations", ImmunizationsDoc, "immunization"> = {
  key: "immunizations",
  kind: "stable",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ immunizations: [] }),
  evolve: (s, log) => {
    let list: readonly Immunization[] = s.doc.immunizations;
    let clocks = s.clocks;
    for (const item of itemsOf(log.payload, ["immunizations", "vaccines"]) as DoseItem[]) {
      const vaccine = text(item.vaccine_name) ?? firstStr(item, VACCINE_ALIASES) ?? null;
      const cvx_code = text(item.cvx_code) ?? firstStr(item, CODE_ALIASES) ?? null;
      if (!vaccine && !cvx_code) continue;
      // administered_date, a name the catalog does not have, comes before its occurrence_date.
      const given = str(item, "administered_date") ?? text(item.occurrence_date) ?? firstStr(item, DATE_ALIASES);
      const administered_date = given ?? log.timestamp.slice(0, 10);
      const key = `${cvx_code ?? normName(vaccine ?? "")}@${administered_date.slice(0, 10)}`;
      ({ list, clocks } = applyOpen<Immunization>({
        list, clocks, ns: "immunizations", key, item, log, consumed: CONSUMED,
        fields: { vaccine, cvx_code, administered_date, dose_number: finite(item.dose_number) ?? null, status: text(item.status) ?? null },
      }));
    }
    return withDoc(s, list === s.doc.immunizations ? s.doc : { immunizations: [...list] }, clocks);
  },
};

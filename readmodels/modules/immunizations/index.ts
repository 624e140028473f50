import type { LogType } from "../../../catalog/log-types.js";
import { applyOpen, itemsOf, type OpenEntry } from "../../lib/open-entries.js";
import { firstStr, normName, num, str } from "../../lib/payload.js";
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

const VACCINE = ["vaccine_name", "vaccine", "name", "display", "vaccine_display"];
const CODE = ["cvx_code", "vaccine_code", "code"];
const DATE = ["administered_date", "occurrence_date", "date_administered", "administered_at", "date"];

export const handles: readonly LogType[] = ["immunization"];

export const immunizations: ReadModel<"immunizations", ImmunizationsDoc> = {
  key: "immunizations",
  kind: "stable",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ immunizations: [] }),
  evolve: (s, log) => {
    let list: readonly Immunization[] = s.doc.immunizations;
    let clocks = s.clocks;
    for (const item of itemsOf(log.payload, ["immunizations", "vaccines"])) {
      const vaccine = firstStr(item, VACCINE) ?? null;
      const cvx_code = firstStr(item, CODE) ?? null;
      if (!vaccine && !cvx_code) continue;
      const administered_date = firstStr(item, DATE) ?? log.timestamp.slice(0, 10);
      const key = `${cvx_code ?? normName(vaccine ?? "")}@${administered_date.slice(0, 10)}`;
      ({ list, clocks } = applyOpen<Immunization>({
        list, clocks, ns: "immunizations", key, item, log, consumed: [...VACCINE, ...CODE, ...DATE, "dose_number", "status"],
        fields: { vaccine, cvx_code, administered_date, dose_number: num(item, "dose_number") ?? null, status: str(item, "status") ?? null },
      }));
    }
    return withDoc(s, list === s.doc.immunizations ? s.doc : { immunizations: [...list] }, clocks);
  },
};

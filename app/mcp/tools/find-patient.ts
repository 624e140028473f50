import { z } from "zod";
import { isCalendarDate } from "../../../src/control/patient-records.js";
import { findPatients, foldName } from "../../../src/state/patient-search.js";
import { fitCount } from "../budget.js";
import { defineProjectTool, jsonResult, toolError } from "../context.js";
import { ExternalIdentifierOutSchema } from "../../../src/control/patient-schemas.js";
import { args } from "./args.js";
import { COUNT, CUT_PAGE, fromTypeBox } from "./output.js";

/** A patient id, as isIdToken (src/ids.ts) checks it: the cursor is the previous page's last. */
const ID_TOKEN = /^[A-Za-z0-9_-]{1,64}$/;

const text = (max: number) => z.string().min(1).max(max);

const schema = {
  name: text(200).trim().optional().describe(
    "Part of the patient's name: each word must begin a word of the name, in any order, ignoring case, accents and punctuation (\"ana garc\" finds Ana María García, \"obrien\" finds O'Brien).",
  ),
  date_of_birth: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date YYYY-MM-DD").refine(isCalendarDate, "must be a real calendar date YYYY-MM-DD").optional()
    .describe("Date of birth, YYYY-MM-DD, matched exactly."),
  identifier_value: text(500).optional().describe("An external identifier's value (an MRN, say), matched exactly; with identifier_system, within that system only."),
  identifier_system: text(500).optional().describe("An external identifier's system (as the patient was registered with it), matched exactly."),
  limit: args.limit(10, 50),
  cursor: z.string().regex(ID_TOKEN, "a cursor is the next_cursor of a previous answer").optional().describe("next_cursor of the previous page; leave out for the first page."),
};

/** A PatientCandidate (src/state/patient-search.ts). */
const candidate = z.looseObject({
  patient_id: z.string(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  demographics_name: z.string().nullable(),
  date_of_birth: z.string().nullable(),
  sex: z.string().nullable(),
  identifiers: z.array(fromTypeBox(ExternalIdentifierOutSchema)),
  created_at: z.string(),
});

const output = z.looseObject({ count: COUNT, candidates: z.array(candidate), next_cursor: z.string().nullable(), ...CUT_PAGE });

export const findPatient = defineProjectTool({
  name: "find_patient",
  title: "Find a patient",
  description: [
    "Finds patients of this project by name, date of birth or external identifier, to learn the service patient id",
    "(pat_...) the other tools take. Every criterion given must hold; give at least one. Names and dates of birth",
    "match the patient record and the demographics the logs recorded (get_stable_data's demographics module).",
    "Answer: JSON {count, candidates: [{patient_id, first_name, last_name, demographics_name, date_of_birth, sex,",
    "identifiers: [{system, value, integration_id?}], created_at}], next_cursor}, in the order patients were created;",
    "pass next_cursor back as cursor for more, null means no more. Several candidates: tell them apart by date of",
    "birth and identifiers, or ask the user; never guess. Needs the scope api:manage-patients (as GET /v1/patients);",
    "not offered to a patient token, which reads its own patient only.",
  ].join(" "),
  scope: "api:manage-patients",
  forPatientTokens: false,
  args: schema,
  output,
  async run(ctx, a: z.infer<z.ZodObject<typeof schema>>, read) {
    if (a.name === undefined && a.date_of_birth === undefined && a.identifier_value === undefined && a.identifier_system === undefined) {
      return toolError("give at least one of name, date_of_birth, identifier_value, identifier_system");
    }
    if (a.name !== undefined && foldName(a.name) === "") return toolError("name must hold a letter or digit");
    const { patients, stateStore: store } = ctx.services;
    const { candidates, more } = await findPatients({ patients, store }, ctx.principal.project_id, { ...a, after: a.cursor });
    const wrap = (page: readonly unknown[], next: string | null) => ({ count: page.length, candidates: page, next_cursor: next });
    const last = candidates.at(-1)?.patient_id ?? null;
    const n = fitCount(candidates, (p) => wrap(p, last));
    read(candidates.slice(0, n).map((c) => c.patient_id));
    if (n === candidates.length) return jsonResult(wrap(candidates, more ? last : null));
    return jsonResult({ ...wrap(candidates.slice(0, n), candidates[n - 1]!.patient_id), truncated: true, note: "Cut to stay under 20 kB; continue with next_cursor." });
  },
});

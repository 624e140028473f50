import { useState } from "preact/hooks";
import { api } from "../lib/api.js";
import { useAction } from "../lib/use-action.js";
import type { Patient } from "../../../client/types.js";

/** The patient's own fields the form edits, as text ("" is not known). */
const FIELDS = [
  { name: "first_name", label: "First name", type: "text" },
  { name: "last_name", label: "Last name", type: "text" },
  { name: "date_of_birth", label: "Date of birth", type: "date" },
  { name: "sex", label: "Sex", type: "text" },
  { name: "email", label: "Email", type: "email" },
  { name: "phone_number", label: "Phone number", type: "tel" },
  { name: "timezone", label: "Time zone (IANA, e.g. Europe/Paris)", type: "text" },
] as const;
type Field = (typeof FIELDS)[number]["name"];
type Values = Record<Field, string>;

const valuesOf = (p?: Patient): Values => ({
  first_name: p?.first_name ?? "",
  last_name: p?.last_name ?? "",
  date_of_birth: p?.date_of_birth?.slice(0, 10) ?? "",
  sex: p?.sex ?? "",
  email: p?.email ?? "",
  phone_number: p?.phone_number ?? "",
  timezone: p?.timezone ?? "",
});

/**
 * Creates a patient (POST /v1/patients) or edits one (PUT /v1/patients/{id}, a partial
 * update). On edit only the fields changed are sent, an emptied one as null (not known);
 * the time zone cannot be emptied, only changed. A new patient may carry one identifier.
 */
export function PatientForm({ patient, onSaved, onCancel }: { patient?: Patient; onSaved: (p: Patient) => void; onCancel?: () => void }) {
  const before = valuesOf(patient);
  const [values, setValues] = useState<Values>(before);
  const [system, setSystem] = useState("");
  const [value, setValue] = useState("");
  const a = useAction();
  const prefix = patient ? "edit" : "new";

  async function submit(e: Event) {
    e.preventDefault();
    const fields: Record<string, string | null> = {};
    for (const f of FIELDS) {
      const v = values[f.name].trim();
      if (patient ? v !== before[f.name] : v !== "") fields[f.name] = v === "" ? null : v;
    }
    if (fields.timezone === null) delete fields.timezone;
    let saved: Patient | undefined;
    const ok = await a.run(async () => {
      if (patient) {
        saved = await api<Patient>("PUT", `/v1/patients/${patient.id}`, { body: fields });
      } else {
        const identifiers = system.trim() && value.trim() ? { external_identifiers: [{ system: system.trim(), value: value.trim() }] } : {};
        saved = await api<Patient>("POST", "/v1/patients", { body: { ...fields, ...identifiers } });
      }
    });
    if (ok && saved) onSaved(saved);
  }

  return (
    <form class="inline" aria-labelledby={`${prefix}-patient`} onSubmit={(e) => void submit(e)}>
      <h2 id={`${prefix}-patient`}>{patient ? "Edit patient" : "New patient"}</h2>
      {FIELDS.map((f) => {
        const field = { id: `${prefix}-${f.name}`, value: values[f.name], onInput: (e: Event) => setValues({ ...values, [f.name]: (e.target as HTMLInputElement).value }) };
        return (
          <span key={f.name} class="field">
            <label for={field.id}>{f.label}</label>
            {f.type === "date" ? <input type="date" {...field} /> : f.type === "email" ? <input type="email" {...field} /> : f.type === "tel" ? <input type="tel" {...field} /> : <input type="text" {...field} />}
          </span>
        );
      })}
      {!patient && (
        <>
          <span class="field">
            <label for="new-system">Identifier system (optional)</label>
            <input id="new-system" placeholder="urn:mrn" value={system} onInput={(e) => setSystem((e.target as HTMLInputElement).value)} />
          </span>
          <span class="field">
            <label for="new-value">Identifier value</label>
            <input id="new-value" value={value} onInput={(e) => setValue((e.target as HTMLInputElement).value)} />
          </span>
        </>
      )}
      <button type="submit" disabled={a.busy}>{patient ? "Save patient" : "Create patient"}</button>
      {onCancel && <button type="button" onClick={onCancel}>Cancel</button>}
      {a.error && <p role="alert" class="error">{a.error}</p>}
    </form>
  );
}

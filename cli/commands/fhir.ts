import { readFile } from "node:fs/promises";
import type { FhirBundle, FhirBundleAnswer, FhirResource, PatientStateClient } from "../../client/index.js";
import { arg, int, noMoreArgs, UsageError, type Command, type Io } from "../command.js";
import { json, readStdin } from "../output.js";

/** A file's FHIR: one resource or Bundle (JSON), or NDJSON (one resource per line, as a Bulk Data export writes). */
export function parseFhir(text: string, source: string): FhirResource[] {
  const trimmed = text.trim();
  if (trimmed === "") throw new UsageError(`${source} holds no FHIR resource`);
  try {
    return [JSON.parse(trimmed) as FhirResource];
  } catch {
    // Not one JSON document: NDJSON.
  }
  return trimmed.split("\n").flatMap((line, i) => {
    if (line.trim() === "") return [];
    try {
      return [JSON.parse(line) as FhirResource];
    } catch (err) {
      throw new UsageError(`${source} line ${i + 1} is not JSON: ${(err as Error).message}`, { cause: err });
    }
  });
}

const isBundle = (r: FhirResource): r is FhirBundle => r.resourceType === "Bundle";

/** Prints each refused entry, and returns how many entries were stored, already stored and refused. */
function tally(answer: FhirBundleAnswer, offset: number, io: Io): { stored: number; duplicates: number; failed: number } {
  const out = { stored: 0, duplicates: 0, failed: 0 };
  answer.entry.forEach((e, i) => {
    const status = e.response.status;
    if (status.startsWith("201")) out.stored++;
    else if (status.startsWith("200")) out.duplicates++;
    else {
      out.failed++;
      const issue = (e.response.outcome.issue as { details?: { text?: string }; expression?: string[] }[] | undefined)?.[0];
      io.err(`resource ${offset + i}: ${status}: ${issue?.expression?.[0] ?? ""} ${issue?.details?.text ?? ""}\n`);
    }
  });
  return out;
}

async function sendBundles(c: PatientStateClient, resources: FhirResource[], o: { patientId?: string; createPatients: boolean; size: number }, io: Io) {
  const total = { stored: 0, duplicates: 0, failed: 0 };
  const bundles: { bundle: FhirBundle; offset: number }[] = [];
  const loose = resources.filter((r) => !isBundle(r));
  resources.filter(isBundle).forEach((bundle) => bundles.push({ bundle, offset: 0 }));
  // Loose resources go in collection Bundles; a Patient and the resources referencing it by
  // Patient/<id> must share one, so NDJSON with Patients is sent as one Bundle per chunk only
  // when it has none.
  const chunk = loose.some((r) => r.resourceType === "Patient") ? Math.max(loose.length, 1) : o.size;
  for (let at = 0; at < loose.length; at += chunk) {
    bundles.push({ bundle: { resourceType: "Bundle", type: "collection", entry: loose.slice(at, at + chunk).map((resource) => ({ resource })) }, offset: at });
  }
  for (const { bundle, offset } of bundles) {
    const t = tally(await c.fhir.bundle(bundle, { ...(o.patientId !== undefined ? { patientId: o.patientId } : {}), createPatients: o.createPatients }), offset, io);
    total.stored += t.stored;
    total.duplicates += t.duplicates;
    total.failed += t.failed;
  }
  return total;
}

export const fhirCommand: Command = {
  name: "fhir",
  summary: "Send FHIR R4: pss fhir send FILE|-",
  help: `Usage: pss fhir send FILE|- [--patient ID] [--create-patients] [--key KEY] [--batch-size N] [--json]

Sends FHIR R4 to the service. FILE (or - for stdin) holds one resource, a Bundle (batch,
transaction or collection), or NDJSON (one resource per line, as a Bulk Data export writes).
One resource that is not a Bundle goes to POST /v1/fhir/resource for --patient; anything
else goes to POST /v1/fhir as Bundles, each entry's patient being the Patient entry its
subject references (found by identifier, created with --create-patients), Patient/<id> of
this project, or --patient. Sending the same file again stores nothing twice. NDJSON
holding Patients goes in one Bundle (a Patient and the resources naming it must share
one); a large export goes through an ingestion job instead: pss ingest FILE --format fhir.

Exit code: 0 when every resource was stored (or already was), 1 otherwise.

Options:
  --patient ID        The patient of resources that reference none
  --create-patients   Create the patient of a Patient resource no identifier finds
  --key KEY           For one resource: its idempotency key (its logs are keyed KEY:n)
  --batch-size N      Resources per Bundle for NDJSON without Patients (default 100)`,
  options: { patient: { type: "string" }, "create-patients": { type: "boolean" }, key: { type: "string" }, "batch-size": { type: "string" } },
  async run({ args, values, io, client }) {
    const sub = arg(args, 0, "subcommand (send)");
    if (sub !== "send") throw new UsageError(`unknown subcommand fhir ${sub}`);
    const file = arg(args, 1, "FILE (or - for stdin)");
    noMoreArgs(args, 2, "pss fhir send takes one FILE (or -); send each file on its own");
    const resources = parseFhir(file === "-" ? await readStdin(io) : await readFile(file, "utf8"), file === "-" ? "stdin" : file);
    const patientId = typeof values.patient === "string" ? values.patient : undefined;
    const c = await client();
    if (resources.length === 1 && !isBundle(resources[0]!)) {
      if (patientId === undefined) throw new UsageError("one resource needs --patient ID: the patient it is about");
      const a = await c.logFhir(patientId, resources[0]!, typeof values.key === "string" ? { idempotencyKey: values.key } : {});
      if (values.json) io.out(`${json(a)}\n`);
      else {
        for (const e of a.errors) io.err(`${e.code}: ${e.message}\n`);
        io.out(`logs accepted ${a.accepted} (duplicates ${a.duplicates}), failed ${a.failed}\n`);
      }
      return a.failed > 0 ? 1 : 0;
    }
    const size = int(values["batch-size"], "batch-size") ?? 100;
    if (size < 1) throw new UsageError("--batch-size must be at least 1");
    const total = await sendBundles(c, resources, { ...(patientId !== undefined ? { patientId } : {}), createPatients: values["create-patients"] === true, size }, io);
    if (values.json) io.out(`${json(total)}\n`);
    else io.out(`resources stored ${total.stored}, already stored ${total.duplicates}, refused ${total.failed}\n`);
    return total.failed > 0 ? 1 : 0;
  },
};

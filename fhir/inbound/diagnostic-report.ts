import type { DiagnosticReport, ImagingStudy, Observation } from "@medplum/fhirtypes";
import { codesIn, codesOfAll, codingIn, conceptText, dateOf, effectiveOf, SYSTEMS } from "../lib/datatypes.js";
import { unmappable, type MapContext, type MapIssue, type MapOutcome, type Mapper } from "../types.js";
import { labResultOf, performingLab } from "./lab.js";
import { IMAGING_REPORTS } from "./loinc.js";

type Path = (string | number)[];

/**
 * The diagnostic-report-status codes whose reports are kept (each result keeps its own
 * status). Registered, cancelled, entered-in-error and unknown reports hold no result the
 * catalog can keep (it has no retraction: the corrected report replaces a wrong one).
 */
const KEPT_STATUS: ReadonlySet<string> = new Set(["final", "partial", "preliminary", "amended", "corrected", "appended"]);

/** HL7 v2 diagnostic service sections (table 0074) that are imaging, with the modality each names. */
const IMAGING_SECTIONS: Readonly<Record<string, string | undefined>> = {
  RAD: undefined, CT: "CT", NMR: "MRI", NMS: "NM", CUS: "US", OUS: "US", VUS: "US", RUS: "US", RX: "XR", XRC: "XR",
};

/** DICOM modality codes (and the words report titles start with) → imaging_result's modality. */
const MODALITY: Readonly<Record<string, string>> = {
  CT: "CT", MR: "MRI", MRI: "MRI", PT: "PET", PET: "PET", NM: "NM", US: "US", XR: "XR", CR: "XR", DX: "XR", MG: "MG", RF: "RF", XA: "XA",
};

function isImaging(r: DiagnosticReport): boolean {
  const categories = codesOfAll(r.category);
  if (categories.some((c) => c in IMAGING_SECTIONS || IMAGING_REPORTS.has(c))) return true;
  if (codesIn(r.code, SYSTEMS.loinc).some((c) => IMAGING_REPORTS.has(c))) return true;
  // A report with a conclusion and no results, not filed as a lab report, is read as an imaging report's impression.
  return !categories.includes("LAB") && (r.result ?? []).length === 0 && Boolean(r.conclusion ?? r.conclusionCode?.length);
}

/** The modality: the imaging study's, else the report's section, else the first word of its title (CT Chest…). */
function modalityOf(r: DiagnosticReport, ctx: MapContext): string | undefined {
  for (const ref of r.imagingStudy ?? []) {
    const study = ref.reference ? (ctx.resolve(ref.reference) as ImagingStudy | undefined) : undefined;
    const code = study?.modality?.[0]?.code;
    if (code) return MODALITY[code] ?? code;
  }
  for (const c of codesOfAll(r.category)) if (IMAGING_SECTIONS[c]) return IMAGING_SECTIONS[c];
  const first = conceptText(r.code)?.split(/\s+/)[0]?.toUpperCase();
  return first ? MODALITY[first] : undefined;
}

/** Radiology → imaging_result: one finding carrying the report's conclusion as the impression. */
function mapImaging(r: DiagnosticReport, ctx: MapContext): MapOutcome {
  const modality = modalityOf(r, ctx);
  if (!modality) {
    return unmappable(["code", "text"], "does not name the modality: give the report a category such as CT, NMR or RX (v2 table 0074), an imagingStudy, or a title starting with it (CT, MR, US, XR, PET, NM)");
  }
  const codes = (r.conclusionCode ?? []).map(conceptText).filter((t): t is string => Boolean(t));
  if (!r.conclusion && codes.length === 0) return unmappable(["conclusion"], "is required: an imaging report is kept by its impression (conclusion or conclusionCode)");
  const performed_at = effectiveOf(r);
  const study_date = dateOf(r.effectiveDateTime ?? r.effectivePeriod?.start);
  const finding: Record<string, unknown> = { modality };
  if (r.conclusion) finding.impression = r.conclusion;
  if (codes.length > 0) finding.finding_description = codes.join("; ");
  if (performed_at) finding.performed_at = performed_at;
  const title = conceptText(r.code);
  if (title) finding.extensions = { study: title };
  return { ok: true, logs: [{ log_type: "imaging_result", payload: { findings: [finding], ...(study_date ? { study_date } : {}) } }] };
}

/**
 * The report's result Observations: contained (`#id`) or other entries of the Bundle. A
 * result that is itself a panel (hasMember, no value) gives its members.
 */
function resultsOf(r: DiagnosticReport, ctx: MapContext): { found: { obs: Observation; path: Path }[]; issues: MapIssue[] } {
  const found: { obs: Observation; path: Path }[] = [];
  const issues: MapIssue[] = [];
  const take = (ref: string | undefined, path: Path, depth: number) => {
    const obs = ref ? ctx.resolve(ref) : undefined;
    if (obs?.resourceType !== "Observation") {
      const what = ref ? `${ref} is neither` : "a result without a literal reference is neither";
      issues.push({ path: [...path, "reference"], message: `${what} contained in the report (#id) nor an entry of the same Bundle: contain the Observation in the report or send it in the same Bundle` });
      return;
    }
    const panel = (obs.hasMember ?? []).length > 0 && !Object.keys(obs).some((k) => k.startsWith("value"));
    if (panel && depth < 2) obs.hasMember!.forEach((m, i) => take(m.reference, [...path, "hasMember", i], depth + 1));
    else found.push({ obs, path });
  };
  (r.result ?? []).forEach((ref, i) => take(ref.reference, ["result", i], 0));
  return { found, issues };
}

/** A laboratory report → one lab_results log: the panel from its code, its results from its Observations. */
function mapLabReport(r: DiagnosticReport, ctx: MapContext): MapOutcome {
  if ((r.result ?? []).length === 0) {
    return unmappable(["result"], "is required: a laboratory report is kept by its results; reference its Observations, contained (#id) or in the same Bundle");
  }
  const { found, issues } = resultsOf(r, ctx);
  if (issues.length > 0) return { ok: false, issues };
  const results: Record<string, unknown>[] = [];
  for (const { obs, path } of found) {
    const out = labResultOf(obs, path, ctx);
    if (!out.ok) return { ok: false, issues: [out.issue] };
    results.push(out.result);
  }
  const panel = codingIn(r.code, SYSTEMS.loinc)?.code;
  const collected = effectiveOf(r) ?? found.map((f) => effectiveOf(f.obs)).find(Boolean);
  const lab = performingLab(r.performer, ctx) ?? performingLab(found[0]?.obs.performer, ctx);
  const payload: Record<string, unknown> = { results };
  if (panel) payload.panel_loinc_code = panel;
  const name = conceptText(r.code);
  if (name) payload.panel_name = name;
  if (collected) payload.collection_datetime = collected;
  if (lab) payload.performing_lab = lab;
  return { ok: true, logs: [{ log_type: "lab_results", ...(collected ? { timestamp: collected } : {}), payload }] };
}

/** DiagnosticReport → imaging_result (radiology, or a conclusion alone) or lab_results (its results). */
export const mapDiagnosticReport: Mapper<DiagnosticReport> = (r, ctx) => {
  if (!KEPT_STATUS.has(r.status)) {
    return unmappable(["status"], `is ${r.status}: only reports with status ${[...KEPT_STATUS].join(", ")} are kept (a wrong report is replaced by sending the corrected one)`);
  }
  return isImaging(r) ? mapImaging(r, ctx) : mapLabReport(r, ctx);
};

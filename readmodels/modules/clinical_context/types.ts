import type { SourceRef } from "../../lib/lists.js";
import type { Obj } from "../../lib/payload.js";

/** Every item carries the event time and the log it came from. */
export interface Item {
  timestamp: string;
  log_id: string;
}

/** A point-in-time item's provenance, as sent: the item's source, else the payload's (null when none); the payload's extensions with the item's own over them at leaf level (`{}` when none). */
export interface Provenance {
  source: unknown;
  extensions: Obj;
}

/** Entries that gather several reports: extensions merged at leaf level (latest event time wins per leaf), the last 10 sources. */
export interface Gathered {
  extensions: Obj;
  sources: SourceRef[];
}

/** The note as sent (fields this service does not model included), with the named fields normalized (null when absent). */
export interface Note extends Item, Provenance {
  note_type: string | null;
  loinc_code: string | null;
  authored_by: Obj | null;
  authored_date: string | null;
  encounter_id: string | null;
  sections: { section_label: string; content: string }[];
  [field: string]: unknown;
}

export interface Finding extends Item, Provenance {
  description: string;
  body_site: string | null;
  severity: string | null;
  /** true: explicitly absent. */
  negation: boolean | null;
  recorded_at: string | null;
}

export interface ImagingFinding extends Item, Provenance {
  modality: string;
  body_region: string | null;
  impression: string | null;
  finding_description: string | null;
  performed_at: string | null;
  study_date: string | null;
}

/** One variant per (gene, variant_designation); the latest report by event time wins. */
export interface GenomicVariant extends Item, Gathered {
  gene: string;
  variant_designation: string | null;
  variant_type: string | null;
  classification: string | null;
  actionability: string | null;
  reported_at: string | null;
}

export interface MeasurementValue extends Item {
  value_numeric: number | null;
  value_string: string | null;
  unit: string | null;
  measured_at: string | null;
}

/** One series per code (code_system|code), else per normalized measurement_type, and body_site. */
export interface Measurement extends Gathered {
  measurement_type: string;
  code_system: string | null;
  code: string | null;
  body_site: string | null;
  latest: MeasurementValue;
  /** The last 50 values by measured_at (else the log's timestamp). */
  history: MeasurementValue[];
}

export interface TreatmentResponse extends Item, Provenance {
  response_category: string;
  treatment_description: string | null;
  assessment_method: string | null;
  reference_date: string | null;
  /** Any other fields of the assessment, as sent (source and extensions aside). */
  details: Obj;
}

export interface FunctionalReading extends Item {
  class: number;
  reported_by: string | null;
  assessment_type: string | null;
  assessor_type: string | null;
  domain: string | null;
  narrative: string | null;
  functional_limitations: string[] | null;
  change_from_prior: Obj | null;
}

/** One series per normalized instrument (nyha, ecog, karnofsky, ...). */
export interface FunctionalStatus extends Gathered {
  instrument: string;
  latest: FunctionalReading;
  history: FunctionalReading[];
}

/**
 * An item of a type whose payload is this service's design (care_encounter,
 * clinical_plan_item, care_goal, care_action, unstructured_report): the payload's fields
 * as sent, plus `key` (its id field when it has one: a later log with the same key
 * replaces the item) and the event time and log id.
 */
export interface OpenItem extends Item {
  key: string | null;
  [field: string]: unknown;
}

export interface ClinicalContextDoc {
  /** Bounded lists (sorted by event time, the last N): notes 20, the others 50. */
  notes: Note[];
  findings: Finding[];
  imaging: ImagingFinding[];
  genomic_variants: GenomicVariant[];
  measurements: Measurement[];
  treatment_responses: TreatmentResponse[];
  functional_status: FunctionalStatus[];
  encounters: OpenItem[];
  plan_items: OpenItem[];
  goals: OpenItem[];
  care_actions: OpenItem[];
  reports: OpenItem[];
}

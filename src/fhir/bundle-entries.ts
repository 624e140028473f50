import type { Bundle, BundleEntry, Patient as FhirPatient, Reference } from "@medplum/fhirtypes";
import type { Resource } from "../../fhir/types.js";

/** A resource's contained resources by `#id`: the only references a lone resource can resolve. */
export function containedOf(resource: Resource | undefined): (reference: string) => Resource | undefined {
  const contained = (resource as { contained?: Resource[] } | undefined)?.contained ?? [];
  return (reference) => (reference.startsWith("#") ? contained.find((c) => c.id === reference.slice(1)) : undefined);
}

/** A Bundle's entries indexed the ways its references name them. */
export class BundleIndex {
  private readonly byUrl = new Map<string, number>();
  /** Observations that are a DiagnosticReport's results here: mapped with the report, not again alone. */
  readonly resultOf = new Map<number, string>();

  constructor(readonly entries: BundleEntry[]) {
    entries.forEach((e, i) => {
      if (e.fullUrl) this.byUrl.set(e.fullUrl, i);
      const r = e.resource;
      if (r?.id) this.byUrl.set(`${r.resourceType}/${r.id}`, i);
    });
    entries.forEach((e) => {
      if (e.resource?.resourceType !== "DiagnosticReport") return;
      const report = e.resource;
      for (const ref of report.result ?? []) {
        const j = this.indexOf(ref.reference);
        if (j !== undefined && this.entries[j]?.resource?.resourceType === "Observation") this.resultOf.set(j, `DiagnosticReport/${report.id ?? e.fullUrl ?? "?"}`);
      }
    });
  }

  /**
   * The entry a reference names: `urn:uuid:…` or any fullUrl exactly; `Type/id` by the
   * entry's resource, or by a fullUrl ending in it (`https://ehr.example/fhir/Type/id`).
   */
  indexOf(reference: string | undefined): number | undefined {
    if (!reference) return undefined;
    const exact = this.byUrl.get(reference);
    if (exact !== undefined) return exact;
    if (!/^[A-Za-z]+\/[^/]+$/.test(reference)) return undefined;
    const i = this.entries.findIndex((e) => e.fullUrl?.endsWith(`/${reference}`));
    return i < 0 ? undefined : i;
  }

  /** What a mapper may resolve for entry `i`: its contained resources, then the Bundle's entries. */
  resolverFor(i: number): (reference: string) => Resource | undefined {
    const contained = containedOf(this.entries[i]?.resource);
    return (reference) => {
      if (reference.startsWith("#")) return contained(reference);
      const j = this.indexOf(reference);
      return j === undefined ? undefined : this.entries[j]?.resource;
    };
  }
}

/** The reference naming a resource's patient, under the element its type uses. */
export function patientReference(resource: Resource): Reference | undefined {
  const r = resource as { subject?: Reference; patient?: Reference; beneficiary?: Reference; participant?: { actor?: Reference }[] };
  if (r.subject ?? r.patient ?? r.beneficiary) return r.subject ?? r.patient ?? r.beneficiary;
  // Appointment names its patient among its participants.
  return r.participant?.map((p) => p.actor).find((a) => a?.reference?.includes("Patient/") || a?.type === "Patient");
}

export const BUNDLE_TYPES = ["batch", "transaction", "collection"] as const;

/** The Bundle's entries when it is one this route takes, else why not. */
export function entriesOf(body: Bundle): { ok: true; entries: BundleEntry[] } | { ok: false; path: string[]; message: string } {
  if (body.resourceType !== "Bundle") return { ok: false, path: ["resourceType"], message: `must be "Bundle" (one resource goes to POST /v1/fhir/resource)` };
  if (!BUNDLE_TYPES.includes(body.type as (typeof BUNDLE_TYPES)[number])) return { ok: false, path: ["type"], message: `must be one of ${BUNDLE_TYPES.join(", ")}` };
  return { ok: true, entries: body.entry ?? [] };
}

export const isPatient = (r: Resource | undefined): r is FhirPatient => r?.resourceType === "Patient";

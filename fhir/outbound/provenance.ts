import type { Provenance } from "@medplum/fhirtypes";
import { fhirCode, fhirInstant, LOG_SYSTEM, SERVICE, stableUuid, type Mapped } from "./lib.js";

const PARTICIPANT = "http://terminology.hl7.org/CodeSystem/provenance-participant-type";

/**
 * Where a resource came from: one Provenance targeting it, with one source entity per log
 * it was compiled from (`what.identifier` {system "urn:pss:log", value: the log id}),
 * recorded at the event time the resource last changed, assembled by the service.
 * `meta.source` holds one URI, so it could not name several logs.
 */
export function provenanceOf(patientId: string, m: Mapped): Mapped<Provenance> | undefined {
  if (m.logIds.length === 0) return undefined;
  const id = stableUuid(patientId, "Provenance", m.fullUrl);
  const recorded = fhirInstant(m.recorded) ?? fhirInstant(m.recorded.slice(0, 10)) ?? "1970-01-01T00:00:00Z";
  const resource: Provenance = {
    resourceType: "Provenance",
    id,
    target: [{ reference: m.fullUrl }],
    recorded,
    agent: [{ type: fhirCode(PARTICIPANT, "assembler", "Assembler"), who: SERVICE }],
    entity: m.logIds.map((value) => ({ role: "source", what: { identifier: { system: LOG_SYSTEM, value } } })),
  };
  return { fullUrl: `urn:uuid:${id}`, resource, logIds: m.logIds, recorded };
}

/** The Provenance of each resource that came from logs, in the resources' order. */
export function provenances(patientId: string, ms: readonly Mapped[]): Mapped<Provenance>[] {
  return ms.map((m) => provenanceOf(patientId, m)).filter((p): p is Mapped<Provenance> => p !== undefined);
}

/** The log ids of a resource as its Provenance names them (for readers of a bundle). */
export function logIdsOf(p: Provenance): string[] {
  return (p.entity ?? []).flatMap((e) => (e.what.identifier?.system === LOG_SYSTEM && e.what.identifier.value ? [e.what.identifier.value] : []));
}

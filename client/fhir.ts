import type { Transport } from "./http.js";
import type { BatchAnswer } from "./types.js";

/** A FHIR R4 resource as JSON: any resource type (GET /v1/fhir/metadata lists those mapped to logs). */
export interface FhirResource {
  resourceType: string;
  id?: string;
  [element: string]: unknown;
}

/** A FHIR R4 Bundle the service takes: batch, transaction or collection. */
export interface FhirBundle extends FhirResource {
  resourceType: "Bundle";
  type: "batch" | "transaction" | "collection";
  entry?: { fullUrl?: string; resource?: FhirResource; [element: string]: unknown }[];
}

/** The answer to a Bundle: per entry, `response.status` ("201 Created", "200 OK" for one stored before, 4xx) and an OperationOutcome. */
export interface FhirBundleAnswer {
  resourceType: "Bundle";
  type: "batch-response" | "transaction-response";
  entry: { response: { status: string; outcome: FhirResource & { resourceType: "OperationOutcome" } } }[];
}

export interface LogFhirOptions {
  /** The derived logs are keyed `<key>:<n>`; without one, by the resource's content. Either way a re-send stores nothing. */
  idempotencyKey?: string;
}

export interface FhirBundleOptions {
  /** The patient of entries that reference none. */
  patientId?: string;
  /** Create the patient of a Patient entry whose identifiers no patient has (needs api:manage-patients). */
  createPatients?: boolean;
}

/** FHIR R4 in: resources and Bundles become the patient logs they map to. */
export class FhirApi {
  constructor(private readonly t: Transport) {}

  /**
   * One resource for a patient (the hosted SDK's `log_fhir`): an unmappable or invalid
   * resource answers `accepted: 0` with a located error. Safe to retry: a re-send is a
   * duplicate, counted as accepted.
   */
  resource(patientId: string, resource: FhirResource, o: LogFhirOptions = {}): Promise<BatchAnswer> {
    return this.t.request<BatchAnswer>("POST", "/v1/fhir/resource", {
      body: { patient_id: patientId, resource, ...(o.idempotencyKey !== undefined ? { idempotency_key: o.idempotencyKey } : {}) },
      idempotent: true,
    });
  }

  /** A Bundle: each entry stored whole or refused with its reason; a transaction is refused whole (ValidationError). Safe to retry. */
  bundle(bundle: FhirBundle, o: FhirBundleOptions = {}): Promise<FhirBundleAnswer> {
    return this.t.request<FhirBundleAnswer>("POST", "/v1/fhir", {
      body: bundle,
      query: { ...(o.patientId !== undefined ? { patient_id: o.patientId } : {}), ...(o.createPatients ? { create_patients: true } : {}) },
      idempotent: true,
    });
  }
}

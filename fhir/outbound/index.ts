/** The patient's compiled state as FHIR R4: a patient summary document and searchsets (see fhir/README.md). */
export { summaryBundle, summaryResources, SECTIONS, type SectionKey, type SummaryOptions } from "./summary.js";
export { isSearchType, parseObservationQuery, searchBundle, SEARCH_TYPES, type ObservationFilter, type SearchType } from "./search.js";
export { logIdsOf } from "./provenance.js";
export { LOG_SYSTEM, PATIENT_SYSTEM, type OutboundInput, type PatientRecord } from "./lib.js";

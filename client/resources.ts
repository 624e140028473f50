import type { Transport } from "./http.js";
import { NotFoundError } from "./errors.js";
import type {
  AccessToken, ApiKey, ApiKeyInput, ApiKeyList, AuditPage, CreatedApiKey, DeadLetterPage, ExternalIdentifier, Health, IdentifierMatcher, IdentifiersAnswer, LogTypeInfo,
  LogTypeList, Organization, Patient, PatientBatchAnswer, PatientDeleted, PatientInput, PatientList, PatientToken, PatientUpdate, Project, ProjectInput, ProjectList, ProjectUpdate,
} from "./types.js";

const seg = encodeURIComponent;

/** Patients of the client's project (scope api:manage-patients). */
export class PatientsApi {
  constructor(private readonly t: Transport) {}

  /**
   * Creates a patient; the service assigns the id. ConflictError when an external identifier
   * belongs to another patient. Not retried after a lost answer or a 5xx (it could create
   * the patient twice): such a NetworkError or ServerError leaves open whether it was created.
   */
  create(input: PatientInput = {}): Promise<Patient> {
    return this.t.request("POST", "/v1/patients", { body: input });
  }
  /** NotFoundError for an unknown or deleted patient. */
  get(id: string): Promise<Patient> {
    return this.t.request("GET", `/v1/patients/${seg(id)}`);
  }
  /** Partial update: only the fields given change (null clears one); identifiers given are added, never removed. */
  update(id: string, patch: PatientUpdate): Promise<Patient> {
    return this.t.request("PUT", `/v1/patients/${seg(id)}`, { body: patch });
  }
  /**
   * A page of patients. limit 1-1000 (@default 50), offset @default 0. system, value and
   * integrationId keep the patients with one identifier matching all those given.
   */
  list(o: { limit?: number; offset?: number; system?: string; value?: string; integrationId?: string } = {}): Promise<PatientList> {
    const { integrationId, ...rest } = o;
    return this.t.request("GET", "/v1/patients", { query: { ...rest, integration_id: integrationId } });
  }
  /** The patient holding an external identifier, or null. Without `system`, the first patient with that value. */
  async findByExternalId(system: string | undefined, value: string): Promise<Patient | null> {
    const r = await this.list({ value, limit: 1, ...(system !== undefined ? { system } : {}) });
    return r.patients[0] ?? null;
  }
  /** Creates up to 1000 patients; each succeeds or fails on its own (see `errors`). Retried only as `create` is. */
  batchCreate(patients: PatientInput[]): Promise<PatientBatchAnswer> {
    return this.t.request("POST", "/v1/patients/batch", { body: { patients } });
  }
  /**
   * Adds identifiers (ConflictError if another patient holds one); present ones are skipped
   * (counted in `skipped`, listed in `skipped_identifiers`), which makes it safe to retry
   * (a retry may count as skipped what a lost attempt added).
   */
  addIdentifiers(id: string, identifiers: ExternalIdentifier[]): Promise<IdentifiersAnswer> {
    return this.t.request("POST", `/v1/patients/${seg(id)}/external-identifiers`, { body: { identifiers }, idempotent: true });
  }
  /**
   * Removes the identifiers any matcher matches (freeing them for other patients): a full
   * pair, a system alone (all of it) or an integration_id. Matchers matching nothing are skipped.
   */
  removeIdentifiers(id: string, matchers: IdentifierMatcher[]): Promise<IdentifiersAnswer> {
    return this.t.request("DELETE", `/v1/patients/${seg(id)}/external-identifiers`, { body: { identifiers: matchers } });
  }
  /** Soft-deletes (the patient then answers 404); `permanent` also erases its logs and state. */
  delete(id: string, o: { permanent?: boolean } = {}): Promise<PatientDeleted> {
    return this.t.request("DELETE", `/v1/patients/${seg(id)}`, {
      query: { permanent: o.permanent },
      // A retry answers 404 when the attempt whose answer was lost deleted the patient.
      afterUncertainRetry: async (err) => (err instanceof NotFoundError ? { id, status: "deleted" as const, permanent: o.permanent === true } : undefined),
    });
  }
}

/** Projects of the organization, by id or slug (api:manage-projects, org-wide key). */
export class ProjectsApi {
  constructor(private readonly t: Transport) {}

  /** Every project, deprecated ones included, oldest first; `status` filters. */
  async list(o: { status?: "active" | "deprecated" } = {}): Promise<Project[]> {
    return (await this.t.request<ProjectList>("GET", "/v1/projects", { query: o })).projects;
  }
  get(idOrSlug: string): Promise<Project> {
    return this.t.request("GET", `/v1/projects/${seg(idOrSlug)}`);
  }
  /** The slug defaults to one made from the name; ConflictError when the organization has it. Retried only as `patients.create` is. */
  create(input: ProjectInput): Promise<Project> {
    return this.t.request("POST", "/v1/projects", { body: input });
  }
  /** Partial update: only the fields given change (null clears description or environment). */
  update(idOrSlug: string, patch: ProjectUpdate): Promise<Project> {
    return this.t.request("PATCH", `/v1/projects/${seg(idOrSlug)}`, { body: patch, idempotent: true });
  }
  /**
   * A new active project with this one's settings (description, environment; those given
   * win) and none of its data. Not retried after a lost answer (it could create two).
   */
  duplicate(idOrSlug: string, input: ProjectInput): Promise<Project> {
    return this.t.request("POST", `/v1/projects/${seg(idOrSlug)}/duplicate`, { body: input });
  }
  /**
   * Deletes a deprecated project for good, with all its data (ConflictError while it is
   * active or the default). A ServerError (503) leaves it partly erased, and calling
   * again finishes the job: it is retried like any DELETE.
   */
  async delete(idOrSlug: string): Promise<void> {
    await this.t.request("DELETE", `/v1/projects/${seg(idOrSlug)}`, {
      // A retry answers 404 when the attempt whose answer was lost deleted the project.
      afterUncertainRetry: async (err) => (err instanceof NotFoundError ? null : undefined),
    });
  }
  /** Soft-deletes: data kept, reads answer 404 until restored. ConflictError for the default or last active project. */
  deprecate(idOrSlug: string): Promise<Project> {
    return this.t.request("POST", `/v1/projects/${seg(idOrSlug)}/deprecate`, { idempotent: true });
  }
  restore(idOrSlug: string): Promise<Project> {
    return this.t.request("POST", `/v1/projects/${seg(idOrSlug)}/restore`, { idempotent: true });
  }
}

/** API keys of the organization (api:manage-projects, org-wide key). */
export class ApiKeysApi {
  constructor(private readonly t: Transport) {}

  /**
   * The secret is in `key` of this answer only. Without `project`, an org-wide key. Not
   * retried after a lost answer (a second key would be made, the first one's secret lost).
   */
  create(input: ApiKeyInput): Promise<CreatedApiKey> {
    return this.t.request("POST", "/v1/api-keys", { body: input });
  }
  /** Every key, without secrets; revoked ones carry `revoked_at`. */
  async list(): Promise<ApiKey[]> {
    return (await this.t.request<ApiKeyList>("GET", "/v1/api-keys")).api_keys;
  }
  /** Revokes at once, with every JWT and patient token minted from the key. */
  revoke(id: string): Promise<ApiKey> {
    return this.t.request("DELETE", `/v1/api-keys/${seg(id)}`);
  }
}

export class AuthApi {
  constructor(private readonly t: Transport, private readonly apiKey: string | undefined) {}

  /** Exchanges an API key (@default the client's) for a short-lived JWT (lifetime in `expires_in`, seconds). */
  async token(apiKey = this.apiKey): Promise<AccessToken> {
    if (apiKey === undefined) throw new TypeError("auth.token needs an API key: pass one or construct the client with apiKey");
    // Another token is as good as the one whose answer was lost: safe to retry.
    return this.t.request("POST", "/auth/token", { body: { api_key: apiKey }, auth: false, idempotent: true });
  }
}

export class PatientTokensApi {
  constructor(private readonly t: Transport) {}

  /** Mints a token bound to one patient (scope sdk:patient-token). expiresIn in seconds, @default 900, at most 86,400. */
  create(patientId: string, o: { expiresIn?: number } = {}): Promise<PatientToken> {
    return this.t.request("POST", "/v1/auth/token", { body: { patient_id: patientId, ...(o.expiresIn !== undefined ? { expires_in: o.expiresIn } : {}) }, idempotent: true });
  }
}

/** Reads that need no particular resource: catalog, audit, dead letters, health, organizations. */
export class AdminApi {
  constructor(private readonly t: Transport) {}

  /** The log-type catalog with each payload's JSON Schema (any credential). */
  async logTypes(): Promise<LogTypeInfo[]> {
    return (await this.t.request<LogTypeList>("GET", "/v1/log-types")).log_types;
  }
  /** One log type by canonical name or legacy alias; null when unknown. */
  async logType(name: string): Promise<LogTypeInfo | null> {
    try {
      return await this.t.request("GET", `/v1/log-types/${seg(name)}`);
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw err;
    }
  }
  /** The organization's audit trail, oldest first (org-wide key, api:manage-projects). */
  audit(o: { since?: string; until?: string; patientId?: string; projectId?: string; limit?: number; cursor?: string } = {}): Promise<AuditPage> {
    return this.t.request("GET", "/v1/audit", { query: { since: o.since, until: o.until, patient_id: o.patientId, project_id: o.projectId, limit: o.limit, cursor: o.cursor } });
  }
  /** Device-feed messages of the project that could not be accepted (sdk:event-log). */
  deadLetters(o: { limit?: number; cursor?: string } = {}): Promise<DeadLetterPage> {
    return this.t.request("GET", "/v1/dead-letters", { query: o });
  }
  /**
   * GET /healthz: each backend's status, the process that answered and its member's
   * processes (no credential). `degraded` is still an answer (an api process without
   * ClickHouse); `unavailable` is a ServerError (503) after retries.
   */
  health(): Promise<Health> {
    return this.t.request("GET", "/healthz", { auth: false });
  }
  /** Creates an organization with its default project and first org-wide key (bootstrap key only). */
  createOrganization(name: string): Promise<Organization> {
    return this.t.request("POST", "/v1/organizations", { body: { name } });
  }
}

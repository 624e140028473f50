import { FhirApi, type FhirResource, type LogFhirOptions } from "./fhir.js";
import { Transport, type TransportOptions } from "./http.js";
import { IngestionApi } from "./ingestion.js";
import { BufferedLogger, type LoggerOptions } from "./logger.js";
import { LogQuery, type LogEntry, type QueryBody } from "./query.js";
import { AdminApi, ApiKeysApi, AuthApi, PatientsApi, PatientTokensApi, ProjectsApi } from "./resources.js";
import { StateApi, type AtOptions } from "./state.js";
import type { BatchAnswer, LogInput } from "./types.js";

/** The transport's options (project, retries, time limits, fetch), with the credential given as `apiKey` or `token`. */
export interface ClientOptions extends Omit<TransportOptions, "baseUrl" | "credential"> {
  /** The service's address. @default "http://127.0.0.1:8080" */
  baseUrl?: string;
  /** An API key. Give this or `token`. */
  apiKey?: string;
  /** A bearer token: a JWT from /auth/token, a patient token or the CLI's stored login. */
  token?: string;
}

/** `client.logs(pid)` builds a query; `client.logs.batch()` and `client.logs.logger()` write. */
export interface LogsApi {
  /** A log query over one patient's logs, or (without an id) the whole project's; `body` seeds it with a wire body. */
  (patientId?: string, body?: QueryBody): LogQuery<LogEntry>;
  /**
   * Sends logs in one request (at most 5,000 by default). Each is validated on its own;
   * with `atomic`, any invalid log makes it a ValidationError and nothing is stored.
   * Retried after a lost answer or a 5xx only when every log has an idempotency_key (a
   * retry then reports the logs the lost attempt stored as duplicates); otherwise only
   * after failures that prove nothing was stored (429, refused connection, ...).
   */
  batch(logs: LogInput[], o?: { atomic?: boolean }): Promise<BatchAnswer>;
  /** A buffered logger that sends in the background; `close()` it before exit. */
  logger(o?: LoggerOptions): BufferedLogger;
}

/**
 * The Patient State Service client: the same reads and writes as REST and MCP, with
 * retries (5xx, 429, network; writes only when a second send cannot apply them twice)
 * and typed errors.
 *
 *     const pss = new PatientStateClient({ baseUrl, apiKey, project: "default" });
 *     const p = await pss.patients.create({ first_name: "Ada" });
 */
export class PatientStateClient {
  readonly patients: PatientsApi;
  readonly logs: LogsApi;
  readonly state: StateApi;
  readonly ingestion: IngestionApi;
  readonly projects: ProjectsApi;
  readonly apiKeys: ApiKeysApi;
  readonly auth: AuthApi;
  readonly patientTokens: PatientTokensApi;
  /** FHIR R4 in: `fhir.resource()` and `fhir.bundle()`. */
  readonly fhir: FhirApi;
  /** Catalog, audit, dead letters, health, organizations. */
  readonly admin: AdminApi;
  private readonly t: Transport;

  constructor(o: ClientOptions = {}) {
    const { baseUrl, apiKey, token, ...transport } = o;
    const credential = token ?? apiKey;
    this.t = new Transport({ ...transport, baseUrl: baseUrl ?? "http://127.0.0.1:8080", ...(credential !== undefined ? { credential } : {}) });
    const t = this.t;
    this.patients = new PatientsApi(t);
    this.state = new StateApi(t);
    this.ingestion = new IngestionApi(t);
    this.projects = new ProjectsApi(t);
    this.apiKeys = new ApiKeysApi(t);
    this.auth = new AuthApi(t, o.apiKey);
    this.patientTokens = new PatientTokensApi(t);
    this.admin = new AdminApi(t);
    this.fhir = new FhirApi(t);
    const batch = (logs: LogInput[], b: { atomic?: boolean } = {}) =>
      t.request<BatchAnswer>("POST", "/v1/logs/batch", {
        body: { logs, ...(b.atomic ? { atomic: true } : {}) },
        // Keyed logs make a second send store nothing new.
        idempotent: logs.every((l) => typeof l.idempotency_key === "string" && l.idempotency_key !== ""),
      });
    this.logs = Object.assign((patientId?: string, body?: QueryBody) => new LogQuery(t, patientId !== undefined ? { patientId } : {}, body), {
      batch,
      logger: (lo?: LoggerOptions) => new BufferedLogger((logs) => batch(logs), lo),
    });
  }

  /** One FHIR R4 resource for a patient, stored as the logs it maps to (`fhir.resource`; the hosted SDK's `log_fhir`). */
  logFhir(patientId: string, resource: FhirResource, o?: LogFhirOptions) {
    return this.fhir.resource(patientId, resource, o);
  }

  /** The patient as an International Patient Summary style FHIR document Bundle (`state.fhirSummary`). */
  fhirSummary(patientId: string, o?: AtOptions) {
    return this.state.fhirSummary(patientId, o);
  }

  /** A log query over the whole project (organization route); `body` seeds it with a wire body (patient_ids makes it a cohort). */
  query(body?: QueryBody): LogQuery<LogEntry> {
    return new LogQuery(this.t, {}, body);
  }

  /** A log query over a cohort: these patients only (at most 1000). */
  cohort(patientIds: string[]): LogQuery<LogEntry> {
    return new LogQuery(this.t, { patientIds: [...patientIds] });
  }

  /** The service's base URL. */
  get baseUrl(): string {
    return this.t.baseUrl;
  }

  /** Replaces the bearer credential (after `auth.token()`, say). */
  setToken(token: string): void {
    this.t.credential = token;
  }
}

/** Every scope of the contract; `admin:organizations` belongs to the bootstrap key alone. */
export const SCOPES = [
  "mcp:patient-state",
  "sdk:event-log",
  "api:manage-patients",
  "sdk:state-read",
  "sdk:patient-token",
  "sdk:historical-ingest",
  "api:manage-projects",
] as const;

export type Scope = (typeof SCOPES)[number] | "admin:organizations";

export const ALL_SCOPES: readonly Scope[] = [...SCOPES, "admin:organizations"];

export function isScope(s: string): s is Scope {
  return (ALL_SCOPES as readonly string[]).includes(s);
}

/** Who is calling: resolved once per request by the auth plugin. */
export interface Principal {
  kind: "api_key" | "jwt" | "patient_token";
  organization_id: string;
  /** The project every read and write of this request is bound to. */
  project_id: string;
  /** Null for org-wide keys (which may pick a project with X-Project). */
  key_project_id: string | null;
  /** The API key this credential comes from; revoking it revokes the credential. */
  key_id: string;
  scopes: ReadonlySet<Scope>;
  /** Set for patient tokens: the only patient this credential reaches. */
  patient_id?: string;
}

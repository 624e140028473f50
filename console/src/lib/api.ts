import type { CredentialInfo } from "../../../client/types.js";

/**
 * The console's only way to the service: the public REST API, with the user's credential
 * from session storage (never in a URL), and the service's error body read as it is.
 */
const KEY = "pss.credential";
const PROJECT = "pss.project";

/** The signed-in credential, as GET /v1/auth/me describes it. */
export type Me = CredentialInfo;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: { field?: string; message: string }[] = [],
  ) {
    super(message);
  }
}

export const session = {
  credential: () => sessionStorage.getItem(KEY),
  project: () => sessionStorage.getItem(PROJECT),
  signIn(credential: string) {
    sessionStorage.setItem(KEY, credential);
  },
  pickProject(project: string | null) {
    if (project) sessionStorage.setItem(PROJECT, project);
    else sessionStorage.removeItem(PROJECT);
  },
  signOut() {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(PROJECT);
  },
};

type Query = Record<string, string | number | boolean | undefined>;

/** Why a 401 or 403 happened, in words a person can act on. */
function refusal(status: number, message: string): string {
  if (status === 401) return `The service did not accept this credential: ${message}. Sign in again with a valid API key or token.`;
  if (status === 403) return `This credential may not do that: ${message}.`;
  return message;
}

export async function api<T>(method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", path: string, o: { query?: Query; body?: unknown; accept?: string } = {}): Promise<T> {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(o.query ?? {})) if (v !== undefined && v !== "") url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { accept: o.accept ?? "application/json" };
  const credential = session.credential();
  if (credential) headers.authorization = `Bearer ${credential}`;
  const project = session.project();
  if (project) headers["x-project"] = project;
  if (o.body !== undefined) headers["content-type"] = "application/json";
  const r = await fetch(url, { method, headers, ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}) });
  const type = r.headers.get("content-type") ?? "";
  const body: unknown = type.includes("json") ? await r.json() : await r.text();
  if (!r.ok) {
    const e = (typeof body === "object" && body !== null ? body : {}) as { message?: string; details?: { field?: string; message: string }[] };
    throw new ApiError(r.status, refusal(r.status, e.message ?? `HTTP ${r.status}`), e.details ?? []);
  }
  return body as T;
}

export const hasScope = (me: Me | null, scope: string) => me !== null && me.scopes.includes(scope);

/**
 * PUTs a file to a one-time upload URL (POST /v1/ingestion/upload-url), reporting the bytes
 * sent as they go: fetch has no upload progress, XMLHttpRequest does. The URL is the
 * credential, so no Authorization header goes with it.
 */
export function upload<T>(url: string, file: Blob, onProgress: (sent: number, total: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", url);
    xhr.responseType = "json";
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => {
      const body = (xhr.response ?? {}) as { message?: string };
      if (xhr.status >= 200 && xhr.status < 300) resolve(body as T);
      else reject(new ApiError(xhr.status, body.message ?? `HTTP ${xhr.status}`));
    };
    xhr.onerror = () => reject(new ApiError(0, "The upload failed: the connection was lost. Try again."));
    xhr.send(file);
  });
}

import { randomBytes } from "node:crypto";
import { SignJWT, jwtVerify, errors as joseErrors } from "jose";
import { isScope, type Scope } from "./scopes.js";

export interface TokenClaims {
  organization_id: string;
  /** Project the token is bound to; null for an org-wide key's token. */
  project_id: string | null;
  scopes: Scope[];
  /** The API key this token was minted from. */
  key_id: string;
  /** Set on patient tokens only. */
  patient_id?: string;
}

const ISSUER = "patient-state-service";

/** A fresh random HS256 secret, used once when no PSS_JWT_SECRET is configured. */
export function generateJwtSecret(): string {
  return randomBytes(48).toString("base64url");
}

/** Short-lived HS256 JWTs. Verification also checks expiry; the caller checks the parent key. */
export class TokenService {
  private readonly key: Uint8Array;

  constructor(secret: string) {
    this.key = new TextEncoder().encode(secret);
  }

  async sign(claims: TokenClaims, ttlSeconds: number, kind: "access" | "patient"): Promise<string> {
    return new SignJWT({
      org: claims.organization_id,
      prj: claims.project_id,
      scp: claims.scopes,
      pid: claims.patient_id,
      knd: kind,
    })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuer(ISSUER)
      .setSubject(claims.key_id)
      .setIssuedAt()
      // Rounded up: a token lives at least its full TTL, never a fraction of a second less.
      .setExpirationTime(Math.ceil(Date.now() / 1000) + ttlSeconds)
      .sign(this.key);
  }

  /** The claims of a valid token, or null (bad signature, expired, malformed). */
  async verify(token: string): Promise<(TokenClaims & { kind: "access" | "patient" }) | null> {
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, algorithms: ["HS256"] });
      const scopes = Array.isArray(payload.scp) ? payload.scp.filter((s): s is Scope => typeof s === "string" && isScope(s)) : [];
      if (typeof payload.org !== "string" || typeof payload.sub !== "string") return null;
      return {
        organization_id: payload.org,
        project_id: typeof payload.prj === "string" ? payload.prj : null,
        scopes,
        key_id: payload.sub,
        patient_id: typeof payload.pid === "string" ? payload.pid : undefined,
        kind: payload.knd === "patient" ? "patient" : "access",
      };
    } catch (err) {
      if (err instanceof joseErrors.JOSEError) return null;
      throw err;
    }
  }
}

import type { FastifyRequest } from "fastify";

/*
 * How a client learns what to send after a 401: RFC 9110 (15.5.2) makes every 401 carry a
 * WWW-Authenticate challenge, RFC 6750 gives the Bearer scheme's, and RFC 9728 adds
 * `resource_metadata`, the address of this service's protected-resource metadata. MCP
 * clients read it to tell "your token expired" from "this server wants OAuth".
 */

export const METADATA_PATH = "/.well-known/oauth-protected-resource";
const REALM = "patient-state-service";

/** The service's address as the client reached it: PSS_PUBLIC_URL, else the request's scheme and Host. */
export function publicBase(req: FastifyRequest, publicUrl: string | null): string {
  return publicUrl ?? `${req.protocol}://${req.host}`;
}

/** The resource a request is for: the MCP endpoint, or the REST API as a whole. */
export function resourcePath(url: string): "/mcp" | "" {
  return url === "/mcp" || url.startsWith("/mcp?") || url.startsWith("/mcp/") ? "/mcp" : "";
}

/** A quoted-string holds no `"` or `\` unescaped (RFC 9110 5.6.4): the message's are replaced. */
const quoted = (text: string) => `"${text.replace(/["\\]/g, "'").replace(/[\r\n]+/g, " ")}"`;

/**
 * The challenge of a 401: without a credential, the scheme and where its metadata is (RFC
 * 6750 3.1: no error code); with one that failed, `invalid_token` and why.
 */
export function bearerChallenge(req: FastifyRequest, publicUrl: string | null, message: string): string {
  const metadata = `${publicBase(req, publicUrl)}${METADATA_PATH}${resourcePath(req.url)}`;
  const parts = [`realm=${quoted(REALM)}`, `resource_metadata=${quoted(metadata)}`];
  if (req.headers.authorization) parts.push(`error="invalid_token"`, `error_description=${quoted(message)}`);
  return `Bearer ${parts.join(", ")}`;
}

import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { SCOPES } from "../../../src/auth/scopes.js";
import { AppError } from "../../../src/errors.js";
import { METADATA_PATH, publicBase } from "../protected-resource.js";

const Metadata = Type.Object({
  resource: Type.String({ description: "The protected resource: the service's address, or its MCP endpoint" }),
  resource_name: Type.String(),
  bearer_methods_supported: Type.Array(Type.String(), { description: "Credentials go in the Authorization header only" }),
  scopes_supported: Type.Array(Type.String()),
  resource_documentation: Type.String({ description: "The OpenAPI document of the REST API" }),
});

/**
 * OAuth 2.0 protected-resource metadata (RFC 9728), for the REST API and for the MCP
 * endpoint (`{METADATA_PATH}/mcp`, the path form RFC 9728 3.1 derives from
 * `https://host/mcp`). It names no authorization server: credentials are API keys, or JWTs
 * from POST /auth/token, sent as `Authorization: Bearer`, not obtained through OAuth.
 */
export const wellKnownRoutes: FastifyPluginAsyncTypebox<{ publicUrl: string | null }> = async (app, { publicUrl }) => {
  for (const resource of ["", "/mcp"] as const) {
    app.get(
      `${METADATA_PATH}${resource}`,
      {
        config: { scope: false },
        schema: {
          summary: `Protected-resource metadata (RFC 9728) of ${resource ? "the MCP endpoint" : "the REST API"} (no auth)`,
          tags: ["health"],
          response: { 200: Metadata },
        },
      },
      async (req) => {
        const base = publicBase(req, publicUrl);
        return {
          resource: `${base}${resource}`,
          resource_name: resource ? "Patient State Service MCP server" : "Patient State Service",
          bearer_methods_supported: ["header"],
          scopes_supported: [...SCOPES],
          resource_documentation: `${base}/openapi.json`,
        };
      },
    );
  }

  // Clients written for MCP's first authorization spec, mcp-remote among them, take a server
  // that names no authorization server for its own, and try these (RFC 8414, 7591, 6749).
  // Each answers what to do instead, which such a client shows, rather than "no route".
  const noOAuth = async () => {
    throw new AppError("not_found", "this service is not an OAuth authorization server: send an API key, or a JWT from POST /auth/token, as Authorization: Bearer <credential>");
  };
  const oauth = (method: "GET" | "POST", url: string, summary: string) =>
    app.route({ method, url, config: { scope: false }, schema: { summary: `${summary}: answers 404 with what to send instead (no auth)`, tags: ["health"] }, handler: noOAuth });
  oauth("GET", "/.well-known/oauth-authorization-server", "OAuth authorization server metadata (RFC 8414)");
  oauth("POST", "/register", "OAuth dynamic client registration (RFC 7591)");
  oauth("GET", "/authorize", "OAuth authorization endpoint");
  oauth("POST", "/token", "OAuth token endpoint");
};

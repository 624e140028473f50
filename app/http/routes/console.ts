import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyPluginAsync } from "fastify";

/**
 * Only the console's own files, no inline script or style, no frames, no other origin:
 * it reaches the service's API on the same origin with the user's credential.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** dist/console, which `npm run build` writes (from the compiled app or from the sources alike). */
export function consoleDir(): string {
  const root = fileURLToPath(new URL("../../..", import.meta.url));
  return basename(root) === "dist" ? join(root, "console") : join(root, "dist", "console");
}

/**
 * The web console at /console/: a single page (any path under it that is not a file is the
 * page, so its routes survive a reload), its assets cached for good (their names carry
 * their hash). The files are served by @fastify/static; the routes are declared here, so
 * each states its access rule: none, the page asks for a credential itself.
 */
export const consoleRoutes: FastifyPluginAsync = async (app) => {
  const dir = consoleDir();
  if (!existsSync(join(dir, "index.html"))) {
    app.log.warn({ dir }, "the console is not built (npm run build); /console/ answers 404");
    return;
  }
  await app.register(fastifyStatic, {
    root: dir,
    serve: false,
    setHeaders(res, path) {
      res.header("content-security-policy", CONSOLE_CSP);
      res.header("x-content-type-options", "nosniff");
      res.header("referrer-policy", "no-referrer");
      res.header("cache-control", path.startsWith(join(dir, "assets")) ? "public, max-age=31536000, immutable" : "no-cache");
    },
  });
  const config = { scope: false as const };
  const hide = { hide: true };
  app.get("/console", { config, schema: hide }, async (_req, reply) => reply.redirect("/console/"));
  app.get<{ Params: { "*": string } }>("/console/*", { config, schema: hide }, async (req, reply) => {
    const path = req.params["*"];
    const asset = /^assets\/[A-Za-z0-9._-]+$/.test(path) && existsSync(join(dir, path));
    return reply.sendFile(asset ? path : "index.html");
  });
};

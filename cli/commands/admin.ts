import { arg, list, noMoreArgs, str, UsageError, type Command } from "../command.js";
import { json, record, table } from "../output.js";

/** The positionals each subcommand takes, its name included: more is a usage error, not ignored. */
const KEYS_ARGS: Record<string, number> = { create: 1, list: 1, revoke: 2 };
const PROJECTS_ARGS: Record<string, number> = { list: 1, create: 2, get: 2, update: 2, duplicate: 3, deprecate: 2, restore: 2, delete: 2 };

const KEY_COLUMNS = ["id", "name", "scopes", "project_id", "created_at", "revoked_at"];
const PROJECT_COLUMNS = ["id", "slug", "name", "status", "environment", "is_default", "deprecated_at", "created_at"];

export const keysCommand: Command = {
  name: "keys",
  summary: "API keys: pss keys create|list|revoke",
  help: `Usage: pss keys create --name NAME --scope SCOPE[,SCOPE...] [--bind-project ID|SLUG]
       pss keys list
       pss keys revoke KEY_ID

Needs an org-wide key with api:manage-projects. A new key holds at most the scopes of
the key creating it; its secret is printed once and never again. Without
--bind-project the key is org-wide (it picks a project per request with X-Project).

Scopes: mcp:patient-state sdk:event-log api:manage-patients sdk:state-read
        sdk:patient-token sdk:historical-ingest api:manage-projects

Example:
  pss keys create --name ingest-bot --scope sdk:event-log,sdk:state-read --bind-project default`,
  options: { name: { type: "string" }, scope: { type: "string", multiple: true }, "bind-project": { type: "string" } },
  async run({ args, values, io, client }) {
    const sub = arg(args, 0, "subcommand (create, list, revoke)");
    if (KEYS_ARGS[sub] !== undefined) noMoreArgs(args, KEYS_ARGS[sub], `see pss keys --help for what keys ${sub} takes`);
    const c = await client();
    switch (sub) {
      case "create": {
        const name = str(values.name);
        const scopes = list(values.scope);
        if (!name || scopes.length === 0) throw new UsageError("keys create needs --name and at least one --scope");
        const project = str(values["bind-project"]);
        const k = await c.apiKeys.create({ name, scopes, ...(project ? { project } : {}) });
        io.out(values.json ? `${json(k)}\n` : `${record({ ...k })}\n`);
        if (!values.json) io.err("The key is shown only now: store it safely.\n");
        return 0;
      }
      case "list": {
        const keys = await c.apiKeys.list();
        io.out(values.json ? `${json(keys)}\n` : `${table(keys.map((k) => ({ ...k, scopes: k.scopes.join(",") })), KEY_COLUMNS)}\n`);
        return 0;
      }
      case "revoke": {
        const k = await c.apiKeys.revoke(arg(args, 1, "KEY_ID"));
        io.out(values.json ? `${json(k)}\n` : `revoked ${k.id} (${k.name}) at ${k.revoked_at}\n`);
        return 0;
      }
      default:
        throw new UsageError(`unknown subcommand keys ${sub}`);
    }
  },
};

/** --description and --environment as given: "" clears one (sent as null), absent leaves it. */
function projectSettings(values: Record<string, unknown>): { description?: string | null; environment?: string | null } {
  const out: { description?: string | null; environment?: string | null } = {};
  for (const k of ["description", "environment"] as const) {
    const v = values[k];
    if (typeof v === "string") out[k] = v === "" ? null : v;
  }
  return out;
}

export const projectsCommand: Command = {
  name: "projects",
  summary: "Projects: pss projects list|create|get|update|duplicate|deprecate|restore|delete",
  help: `Usage: pss projects list [--status active|deprecated]
       pss projects create NAME [--slug SLUG] [--description TEXT] [--environment TAG]
       pss projects get ID|SLUG
       pss projects update ID|SLUG [--name NAME] [--slug SLUG] [--description TEXT] [--environment TAG]
       pss projects duplicate ID|SLUG NAME [--slug SLUG] [--description TEXT] [--environment TAG]
       pss projects deprecate ID|SLUG
       pss projects restore ID|SLUG
       pss projects delete ID|SLUG --yes

Needs an org-wide key with api:manage-projects. A deprecated project keeps its data but
answers 404 everywhere else until restored; the default project cannot be deprecated.
--environment is a free tag (dev, staging, prod, ...); an empty --description or
--environment clears it. duplicate copies the settings (description, environment), never
the data. delete erases a deprecated project and all its data for good (--yes confirms);
if it fails halfway, run it again to finish.`,
  options: {
    slug: { type: "string" },
    name: { type: "string" },
    status: { type: "string" },
    description: { type: "string" },
    environment: { type: "string" },
    yes: { type: "boolean" },
  },
  async run({ args, values, io, client }) {
    const sub = arg(args, 0, "subcommand (list, create, get, update, duplicate, deprecate, restore, delete)");
    if (PROJECTS_ARGS[sub] !== undefined) noMoreArgs(args, PROJECTS_ARGS[sub], `see pss projects --help for what projects ${sub} takes`);
    const c = await client();
    const show = (p: object) => io.out(values.json ? `${json(p)}\n` : `${record({ ...p })}\n`);
    const slug = str(values.slug);
    switch (sub) {
      case "list": {
        const status = str(values.status);
        if (status !== undefined && status !== "active" && status !== "deprecated") throw new UsageError("--status must be active or deprecated");
        const ps = await c.projects.list(status ? { status } : {});
        io.out(values.json ? `${json(ps)}\n` : `${table(ps, PROJECT_COLUMNS)}\n`);
        return 0;
      }
      case "create":
        show(await c.projects.create({ name: arg(args, 1, "NAME"), ...(slug ? { slug } : {}), ...projectSettings(values) }));
        return 0;
      case "get":
        show(await c.projects.get(arg(args, 1, "ID|SLUG")));
        return 0;
      case "update": {
        const patch = { ...(str(values.name) ? { name: str(values.name)! } : {}), ...(slug ? { slug } : {}), ...projectSettings(values) };
        if (Object.keys(patch).length === 0) throw new UsageError("projects update needs --name, --slug, --description or --environment");
        show(await c.projects.update(arg(args, 1, "ID|SLUG"), patch));
        return 0;
      }
      case "duplicate":
        show(await c.projects.duplicate(arg(args, 1, "ID|SLUG"), { name: arg(args, 2, "NAME"), ...(slug ? { slug } : {}), ...projectSettings(values) }));
        return 0;
      case "deprecate":
        show(await c.projects.deprecate(arg(args, 1, "ID|SLUG")));
        return 0;
      case "restore":
        show(await c.projects.restore(arg(args, 1, "ID|SLUG")));
        return 0;
      case "delete": {
        const ref = arg(args, 1, "ID|SLUG");
        if (values.yes !== true) throw new UsageError(`projects delete erases ${ref} and all its data for good: add --yes to confirm`);
        await c.projects.delete(ref);
        io.out(values.json ? `${json({ deleted: ref })}\n` : `deleted ${ref}\n`);
        return 0;
      }
      default:
        throw new UsageError(`unknown subcommand projects ${sub}`);
    }
  },
};

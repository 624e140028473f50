import { arg, list, str, UsageError, type Command } from "../command.js";
import { json, record, table } from "../output.js";

const KEY_COLUMNS = ["id", "name", "scopes", "project_id", "created_at", "revoked_at"];
const PROJECT_COLUMNS = ["id", "slug", "name", "status", "is_default", "deprecated_at", "created_at"];

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

export const projectsCommand: Command = {
  name: "projects",
  summary: "Projects: pss projects list|create|get|update|deprecate|restore",
  help: `Usage: pss projects list [--status active|deprecated]
       pss projects create NAME [--slug SLUG]
       pss projects get ID|SLUG
       pss projects update ID|SLUG [--name NAME] [--slug SLUG]
       pss projects deprecate ID|SLUG
       pss projects restore ID|SLUG

Needs an org-wide key with api:manage-projects. A deprecated project keeps its data but
answers 404 everywhere else until restored; the default project cannot be deprecated.`,
  options: { slug: { type: "string" }, name: { type: "string" }, status: { type: "string" } },
  async run({ args, values, io, client }) {
    const sub = arg(args, 0, "subcommand (list, create, get, update, deprecate, restore)");
    const c = await client();
    const show = (p: object) => io.out(values.json ? `${json(p)}\n` : `${record({ ...p })}\n`);
    switch (sub) {
      case "list": {
        const status = str(values.status);
        if (status !== undefined && status !== "active" && status !== "deprecated") throw new UsageError("--status must be active or deprecated");
        const ps = await c.projects.list(status ? { status } : {});
        io.out(values.json ? `${json(ps)}\n` : `${table(ps as unknown as Record<string, unknown>[], PROJECT_COLUMNS)}\n`);
        return 0;
      }
      case "create": {
        const slug = str(values.slug);
        show(await c.projects.create({ name: arg(args, 1, "NAME"), ...(slug ? { slug } : {}) }));
        return 0;
      }
      case "get":
        show(await c.projects.get(arg(args, 1, "ID|SLUG")));
        return 0;
      case "update": {
        const patch = { ...(str(values.name) ? { name: str(values.name)! } : {}), ...(str(values.slug) ? { slug: str(values.slug)! } : {}) };
        if (Object.keys(patch).length === 0) throw new UsageError("projects update needs --name or --slug");
        show(await c.projects.update(arg(args, 1, "ID|SLUG"), patch));
        return 0;
      }
      case "deprecate":
        show(await c.projects.deprecate(arg(args, 1, "ID|SLUG")));
        return 0;
      case "restore":
        show(await c.projects.restore(arg(args, 1, "ID|SLUG")));
        return 0;
      default:
        throw new UsageError(`unknown subcommand projects ${sub}`);
    }
  },
};

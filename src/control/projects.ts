import { isKvConflict, type JsonKv } from "../../infra/nats/json-kv.js";
import { AppError } from "../errors.js";
import { digest } from "./hash.js";

export interface Project {
  id: string;
  organization_id: string;
  name: string;
  slug: string;
  status: "active" | "deprecated";
  is_default: boolean;
  deprecated_at: string | null;
  created_at: string;
  /** Free text for people (at most 2,000 characters); absent on records older than it. */
  description?: string | null;
  /** A free intent tag such as dev, staging or prod (at most 64 characters). */
  environment?: string | null;
  /**
   * Set when a permanent deletion started (internal, never served): a deletion cut short
   * leaves the project deprecated with part of its data gone, and restoring it then
   * would bring back a half-erased project, so only a DELETE may follow.
   */
  deleting_since?: string;
}

/** What a rename or retag may change; null clears description or environment. */
export interface ProjectChanges {
  name?: string;
  slug?: string;
  description?: string | null;
  environment?: string | null;
}

/** A cached value with the KV revision it was read at; `value: null` is a deletion. */
interface Cached {
  value: Project | null;
  revision: number;
}

const PROJECT_ID = /^prj_[0-9A-Z]{26}$|^prj_default$/;

/** Slugs are lowercase words joined by dashes: they can never look like a project id. */
/** The project every organization is made with: the one its org-wide keys write to unless told otherwise. */
export function defaultProject(organization_id: string, id: string, created_at: string): Project {
  return { id, organization_id, name: "Default", slug: "default", status: "active", is_default: true, deprecated_at: null, created_at };
}

export const SLUG_PATTERN = "^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$";

/** The slug a name gives when the caller sends none: "Cardiology Study #2" → "cardiology-study-2". */
export function slugFromName(name: string): string {
  const s = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63)
    .replace(/-+$/, "");
  return s === "" ? "project" : s;
}

const slugTaken = (slug: string) =>
  new AppError("conflict", `the organization already has a project with slug ${slug}; send another slug`, [
    { type: "conflict", message: "slug already in use in this organization", field: "slug", input_value: slug },
  ]);

/**
 * Projects by id, plus a slug index per organization (`{org}.{digest(slug)}` → id) whose
 * KV create() makes slugs unique. The slug index also lists an organization's projects.
 */
export class ProjectStore {
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly projects: JsonKv<Project>,
    private readonly slugs: JsonKv<{ project_id: string }>,
  ) {}

  /** Drops a cached project (the next read goes to the bucket). */
  invalidate(id: string): void {
    this.cache.delete(id);
  }

  /**
   * Takes a value seen on the bucket watch (null: deleted). A revision never goes back,
   * so a read that started before a deprecation and finishes after it cannot put the
   * active project back into the cache.
   */
  refresh(id: string, value: Project | null, revision: number): void {
    const cur = this.cache.get(id);
    if (!cur || cur.revision < revision) this.cache.set(id, { value, revision });
  }

  private slugKey(org: string, slug: string): string {
    return `${org}.${digest(slug)}`;
  }

  /** The project as stored now (active or deprecated); null when absent. */
  async get(id: string): Promise<Project | null> {
    if (!PROJECT_ID.test(id)) return null;
    const v = await this.projects.get(id);
    if (v) this.refresh(id, v.value, v.revision);
    return v?.value ?? null;
  }

  /** Finds a project of `org` by id or slug, active or not; null when absent or of another organization. */
  async resolve(org: string, idOrSlug: string): Promise<Project | null> {
    const byId = PROJECT_ID.test(idOrSlug) ? await this.get(idOrSlug) : null;
    if (byId) return byId.organization_id === org ? byId : null;
    const s = await this.slugs.get(this.slugKey(org, idOrSlug));
    if (!s) return null;
    const p = await this.get(s.value.project_id);
    // A claim left behind by an interrupted slug change points at a project that moved on.
    return p && p.organization_id === org && p.slug === idOrSlug ? p : null;
  }

  /**
   * Active-project check on the request path (auth, device feed). Cached, because every
   * request asks it; the bucket watch refreshes the entry on any change, so a
   * deprecation or restore made by any instance applies at once.
   */
  async getActiveCached(id: string): Promise<Project | null> {
    const cached = this.cache.get(id);
    const p = cached ? cached.value : await this.get(id);
    return p && p.status === "active" ? p : null;
  }

  /** Every project of the organization, deprecated ones too, by creation time. */
  async list(org: string): Promise<Project[]> {
    const claims = await this.slugs.keys(`${org}.*`);
    const ids = new Set<string>();
    for (const k of claims) {
      const c = await this.slugs.get(k);
      if (c) ids.add(c.value.project_id);
    }
    const found = await Promise.all([...ids].map((id) => this.get(id)));
    return found.filter((p): p is Project => p !== null && p.organization_id === org).sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }

  /**
   * Claims `slug` in `org` for `projectId`. A claim whose project no longer carries that
   * slug (a slug change interrupted before it released the old one) is taken over.
   */
  private async claimSlug(org: string, slug: string, projectId: string): Promise<void> {
    const key = this.slugKey(org, slug);
    try {
      await this.slugs.create(key, { project_id: projectId });
      return;
    } catch (err) {
      if (!isKvConflict(err)) throw err;
    }
    const holder = await this.slugs.get(key);
    if (!holder) return this.claimSlug(org, slug, projectId);
    if (holder.value.project_id === projectId) return;
    const other = await this.get(holder.value.project_id);
    if (other && other.slug === slug) throw slugTaken(slug);
    try {
      await this.slugs.update(key, { project_id: projectId }, holder.revision);
    } catch (err) {
      if (isKvConflict(err)) throw slugTaken(slug);
      throw err;
    }
  }

  /** Creates the project and claims its slug; false when the id exists already (bootstrap reruns). 409 when the slug is taken. */
  async create(p: Project): Promise<boolean> {
    await this.claimSlug(p.organization_id, p.slug, p.id);
    try {
      const revision = await this.projects.create(p.id, p);
      this.refresh(p.id, p, revision);
      return true;
    } catch (err) {
      if (!isKvConflict(err)) throw err;
      return false;
    }
  }

  /**
   * Compare-and-set change of one project; `change` returns the new value, or undefined
   * to leave it. The local cache takes the result at once (the watch tells the others).
   */
  async modify(id: string, change: (cur: Project) => Project | undefined): Promise<Project | null> {
    const r = await this.projects.modify(id, change);
    if (r) this.refresh(id, r.value, r.revision);
    return r?.value ?? null;
  }

  /**
   * Changes the fields given (a partial update); the new slug is claimed before the
   * project changes, the old one released after.
   */
  async update(p: Project, changes: ProjectChanges): Promise<Project> {
    const slug = changes.slug ?? p.slug;
    if (slug !== p.slug) await this.claimSlug(p.organization_id, slug, p.id);
    const updated = await this.modify(p.id, (cur) => ({
      ...cur,
      name: changes.name ?? cur.name,
      slug,
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      ...(changes.environment !== undefined ? { environment: changes.environment } : {}),
    }));
    if (!updated) throw new AppError("not_found", `project ${p.id} not found`);
    if (slug !== p.slug) await this.slugs.delete(this.slugKey(p.organization_id, p.slug));
    return updated;
  }

  /**
   * Removes the project record, then every slug claim still pointing at it (one left by
   * an interrupted slug change too). The record goes first: a claim it leaves behind
   * points at nothing, which claimSlug takes over, so the slug is free either way. The
   * KV delete reaches every instance's cache through the bucket watch.
   */
  async remove(p: Project): Promise<void> {
    await this.projects.delete(p.id);
    // Ids are never reused: nothing may bring the record back into this cache.
    this.refresh(p.id, null, Number.MAX_SAFE_INTEGER);
    for (const key of await this.slugs.keys(`${p.organization_id}.*`)) {
      const claim = await this.slugs.get(key);
      if (claim?.value.project_id !== p.id) continue;
      await this.slugs.delete(key, claim.revision).catch((err) => {
        if (!isKvConflict(err)) throw err;
      });
    }
  }
}

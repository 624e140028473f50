import type { TopologyNames } from "../infra/nats/topology.js";
import type { OrganizationStore } from "../src/control/organizations.js";
import type { ProjectStore } from "../src/control/projects.js";
import { isIdToken } from "../src/ids.js";

/** Where a letter is filed: a project's dead letters, or, with `operator`, the operator's. */
export interface LetterPlace {
  organization_id: string;
  project_id: string;
  operator?: true;
}

/**
 * The operator's letters, `{ns}.dlq._operator.device_feed`: of messages naming no
 * organization of the service. No credential's route reads them (`_operator` is no
 * organization id); the operator reads them with NATS's stream tools.
 */
export const OPERATOR_PLACE: LetterPlace = { organization_id: "_operator", project_id: "device_feed", operator: true };


/** Where a message the feed's stream kept goes, and what is wrong with its subject, if anything. */
export interface StoredAddress {
  place: LetterPlace;
  /** The subject's tokens are not ids (a wildcard): nothing of the message is read. */
  subjectProblem?: string;
  /** The subject's project is no active project of its organization: nothing is stored. */
  projectProblem?: string;
}

/**
 * Reads the organization and project a device-feed subject names, and chooses where the
 * message's letter goes so that someone who can act on it reads it: the project named,
 * when it is one of the organization named (a deprecated one too: its letters are read
 * once it is restored); else the organization's default project, when the organization
 * exists (a letter there says only what the gateway itself sent); else the operator's.
 * A project of another organization reads as not found, so nothing tells a gateway which
 * projects exist elsewhere.
 */
export class FeedAddresses {
  /** `{ns}.ingest`. */
  private readonly root: string;

  constructor(
    names: TopologyNames,
    private readonly projects: Pick<ProjectStore, "getActiveCached" | "get" | "resolve">,
    private readonly orgs: Pick<OrganizationStore, "get">,
  ) {
    this.root = names.ingestSubjectsMisshapen[0];
  }

  private tokensOf(subject: string): string[] {
    return subject === this.root ? [] : subject.slice(this.root.length + 1).split(".");
  }

  /** A message of `{ns}.ingest.{organization}.{project}`, as the feed's stream keeps it. */
  async ofStored(subject: string): Promise<StoredAddress> {
    const [org, project] = this.tokensOf(subject);
    if (!isIdToken(org) || !isIdToken(project)) {
      const subjectProblem = `subject ${subject} does not name an organization and a project by their ids (letters, digits, _ or -; no wildcards): nothing of the message was read`;
      return { place: await this.ofOrganization(org), subjectProblem };
    }
    const p = await this.projects.getActiveCached(project);
    if (p && p.organization_id === org) return { place: { organization_id: org, project_id: project } };
    const stored = await this.projects.get(project);
    if (stored && stored.organization_id === org) {
      return { place: { organization_id: org, project_id: project }, projectProblem: `project ${project} is deprecated: restore it, or publish to an active project; nothing of the message was stored` };
    }
    const place = await this.ofOrganization(org);
    if (place.operator) return { place, projectProblem: `organization ${org} not found: the subject takes the organization's id; nothing of the message was stored` };
    const bySlug = await this.projects.resolve(org, project);
    const hint = bySlug ? `; "${project}" is the slug of project ${bySlug.id}: the subject takes the project's id` : "";
    return { place, projectProblem: `project ${project} not found in organization ${org}${hint}; nothing of the message was stored` };
  }

  /** A message of `{ns}.ingest` with fewer or more than two tokens (which no stream keeps). */
  async ofMisshapen(subject: string): Promise<LetterPlace> {
    const [org, project] = this.tokensOf(subject);
    if (isIdToken(org) && isIdToken(project)) {
      const p = await this.projects.get(project);
      if (p && p.organization_id === org) return { organization_id: org, project_id: project };
    }
    return this.ofOrganization(org);
  }

  /** What the reply and the letter of a misshapen subject say. */
  misshapenProblem(subject: string): string {
    const n = this.tokensOf(subject).length;
    return `subject ${subject} has ${n} token${n === 1 ? "" : "s"} after ${this.root}, not 2: publish to ${this.root}.{organization_id}.{project_id} (ids, not slugs); nothing of the message was stored`;
  }

  /** The default project of the organization a token names, else the operator's letters. */
  private async ofOrganization(org: string | undefined): Promise<LetterPlace> {
    const o = isIdToken(org) ? await this.orgs.get(org) : null;
    return o ? { organization_id: o.id, project_id: o.default_project_id } : OPERATOR_PLACE;
  }
}

import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import type { JetStreamPublisher } from "../../infra/nats/jetstream-publisher.js";
import { AUDIT_MAX_MSG_BYTES, type TopologyNames } from "../../infra/nats/topology.js";
import { encodeEntry } from "./encode-entry.js";
import { readAuditEntry } from "./stored-entry.js";

/** One audited request (or one MCP call within a request): who did what to which patient, and how it ended. */
export interface AuditEntry {
  /** When the answer was decided, just before it was sent (ISO 8601 UTC). */
  at: string;
  organization_id: string;
  project_id: string;
  /** The API key behind the credential (for JWTs and patient tokens, the key they were minted from). */
  key_id: string;
  credential: "api_key" | "jwt" | "patient_token";
  method: string;
  /** The route pattern, e.g. `/v1/state/:pid/stable` (never the query string). */
  route: string;
  /** For MCP: `tools/call get_view`, `resources/read`, `prompts/get visit_prep`; else null. */
  tool: string | null;
  /** The one patient the request named, when it named exactly one. */
  patient_id: string | null;
  /** Every patient the request named (a log batch, a cohort query), each once, as far as the entry's size allows. */
  patient_ids: string[];
  /**
   * Names the request gave that `patient_ids` does not list: strings that cannot be a
   * patient id, and ids past the entry's size bound. Absent when every name is listed.
   */
  patient_ids_omitted?: number;
  /** HTTP status of the answer. */
  status: number;
  request_id: string;
}

/** A stored entry: `id` is its stream sequence, which is also the paging cursor. */
export type StoredAuditEntry = AuditEntry & { id: string };

export interface AuditQuery {
  /** Entries at or after this time (ISO 8601). */
  since?: string;
  /** Entries at or before this time (ISO 8601). */
  until?: string;
  patient_id?: string;
  project_id?: string;
  /** Only entries of this API key (a JWT's or patient token's parent key included). */
  key_id?: string;
  /** Only entries of this route pattern, as entries name it (`/v1/projects/:id`). */
  route?: string;
  /** @default 100 */
  limit: number;
  /** next_cursor of the previous page: reading resumes after it. */
  cursor?: number;
}

export interface AuditPage {
  entries: StoredAuditEntry[];
  next_cursor: string | null;
}

export interface AuditLogOptions {
  /**
   * The NATS server's max_payload (bytes): no entry is published larger than it or than
   * the audit stream's max_msg_size, less 1 KiB for the subject and framing.
   * @default 1_048_576 (1 MiB, nats-server's default)
   */
  maxPayload?: number;
  /**
   * Most entries one page may scan while filtering (by patient, project, key or route), so that a
   * rare patient in a long trail cannot hold a request for minutes; the page then ends
   * early with a next_cursor. @default 20_000
   */
  maxScan?: number;
}

/**
 * Publishes may finish out of time order (concurrent requests); reading stops only once
 * entries are this far past `until`. @default 5_000 ms
 */
const UNTIL_SLACK_MS = 5_000;

/**
 * The audit trail: an append-only JetStream stream, one subject per organization. An
 * entry always fits in one message (see encodeEntry); the HTTP layer waits for it to be
 * stored before answering (app/http/plugins/audit.ts).
 */
export class AuditLog {
  private readonly encoder = new TextEncoder();
  private readonly maxScan: number;
  /** Largest entry published, in bytes. */
  readonly maxEntryBytes: number;

  constructor(
    private readonly deps: { publisher: JetStreamPublisher; js: JetStreamClient; jsm: JetStreamManager; names: TopologyNames },
    opts: AuditLogOptions = {},
  ) {
    this.maxScan = opts.maxScan ?? 20_000;
    this.maxEntryBytes = Math.min(opts.maxPayload ?? 1024 * 1024, AUDIT_MAX_MSG_BYTES) - 1024;
  }

  /** Appends the entry, bounded to fit one message; resolves once JetStream stored it. */
  async append(entry: AuditEntry): Promise<void> {
    const data = this.encoder.encode(encodeEntry(entry, this.maxEntryBytes));
    await this.deps.publisher.publish(this.deps.names.auditSubject(entry.organization_id), data);
  }

  /** One page of the organization's trail, oldest first. */
  async read(org: string, q: AuditQuery): Promise<AuditPage> {
    const { js, jsm, names } = this.deps;
    const start =
      q.cursor !== undefined
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: q.cursor + 1 }
        : q.since !== undefined
          ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: new Date(q.since).toISOString() }
          : { deliver_policy: DeliverPolicy.All };
    // An ephemeral consumer (not an ordered one) because its creation answers how many
    // entries there are to read: an empty range ends here instead of waiting for one.
    const info = await jsm.consumers.add(names.auditStream, {
      ...start,
      filter_subject: names.auditSubject(org),
      ack_policy: AckPolicy.None,
      inactive_threshold: 30_000_000_000, // 30 s in ns: the server drops it if we vanish
      mem_storage: true,
    });
    const entries: StoredAuditEntry[] = [];
    let next: string | null = null;
    if (info.num_pending === 0) {
      await jsm.consumers.delete(names.auditStream, info.name).catch(() => undefined);
      return { entries, next_cursor: next };
    }
    const since = q.since !== undefined ? Date.parse(q.since) : undefined;
    const until = q.until !== undefined ? Date.parse(q.until) : undefined;
    const consumer = await js.consumers.get(names.auditStream, info.name);
    const iter = await consumer.consume({ max_messages: Math.min(1_000, q.limit * 4) });
    let scanned = 0;
    try {
      for await (const m of iter) {
        scanned++;
        // An entry the service did not write is skipped (see readAuditEntry).
        const e = readAuditEntry(m.data);
        const at = e === null ? NaN : Date.parse(e.at);
        if (until !== undefined && at > until + UNTIL_SLACK_MS) break;
        if (e !== null && matches(e, at, q, since, until)) entries.push({ id: String(m.seq), ...e });
        // pending counts what was in the stream past this entry when it was delivered.
        if (m.info.pending === 0) break;
        if (entries.length === q.limit || scanned >= this.maxScan) {
          next = String(m.seq);
          break;
        }
      }
    } finally {
      iter.stop();
      await jsm.consumers.delete(names.auditStream, info.name).catch(() => undefined);
    }
    return { entries, next_cursor: next };
  }
}

function matches(e: AuditEntry, at: number, q: AuditQuery, since: number | undefined, until: number | undefined): boolean {
  if (since !== undefined && at < since) return false;
  if (until !== undefined && at > until) return false;
  if (q.project_id !== undefined && e.project_id !== q.project_id) return false;
  if (q.key_id !== undefined && e.key_id !== q.key_id) return false;
  if (q.route !== undefined && e.route !== q.route) return false;
  if (q.patient_id !== undefined && e.patient_id !== q.patient_id && !e.patient_ids.includes(q.patient_id)) return false;
  return true;
}

import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JetStreamClient, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";
import type { JetStreamPublisher } from "../infra/nats/jetstream-publisher.js";
import type { TopologyNames } from "../infra/nats/topology.js";
import type { ProjectStore } from "../src/control/projects.js";
import type { LogWriter } from "../src/logs/log-writer.js";

/** What the dead-letter stream keeps of a message it could not accept. */
export interface DeadLetter {
  received_at: string;
  subject: string;
  reason: "invalid_json" | "project_not_found" | "invalid_logs";
  errors: { index: number; code: string; message: string; details: unknown[] }[];
  /** The message body as received (parsed when it was JSON). */
  message: unknown;
}

interface Logger {
  error(obj: unknown, msg?: string): void;
}

/**
 * Device gateways publish log envelopes (one log, or `{"logs":[...]}`) on
 * `{ns}.ingest.{organization}.{project}`. Each is handled exactly like the batch route,
 * through the same LogWriter; what fails validation goes to the dead-letter stream with
 * its errors, and what fails for lack of storage is retried.
 */
export class DeviceFeed {
  private messages: ConsumerMessages | null = null;
  private loop: Promise<void> | null = null;
  private readonly encoder = new TextEncoder();
  readonly stats = { received: 0, accepted: 0, dead_lettered: 0 };

  constructor(
    private readonly deps: {
      js: JetStreamClient;
      jsm: JetStreamManager;
      names: TopologyNames;
      projects: ProjectStore;
      writer: LogWriter;
      publisher: JetStreamPublisher;
      log: Logger;
    },
    private readonly consumer: string,
  ) {}

  async start(): Promise<void> {
    const { jsm, js, names } = this.deps;
    await jsm.consumers
      .add(names.ingestStream, { durable_name: this.consumer, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, ack_wait: 30_000_000_000, max_ack_pending: 1_000 })
      .catch((err) => {
        if (!String(err.message).includes("already in use") && !String(err.message).includes("exists")) throw err;
      });
    const c = await js.consumers.get(names.ingestStream, this.consumer);
    this.messages = await c.consume({ max_messages: 256 });
    const messages = this.messages;
    this.loop = (async () => {
      for await (const m of messages) {
        await this.handle(m).catch((err) => {
          this.deps.log.error({ err, subject: m.subject }, "device feed message failed; will retry");
          m.nak(1_000);
        });
      }
    })();
  }

  async stop(): Promise<void> {
    this.messages?.stop();
    await this.loop;
  }

  private async deadLetter(m: JsMsg, org: string, project: string, dl: Omit<DeadLetter, "received_at" | "subject">): Promise<void> {
    const letter: DeadLetter = { received_at: new Date().toISOString(), subject: m.subject, ...dl };
    // Named by the message's place in the feed: a message delivered again (a crash between
    // this publish and the ack) is then one letter, not two, within the stream's duplicate window.
    await this.deps.publisher.publish(this.deps.names.deadLetterSubject(org, project), this.encoder.encode(fitLetter(letter)), { msgId: `dead-letter:${m.seq}` });
    this.stats.dead_lettered++;
  }

  private async handle(m: JsMsg): Promise<void> {
    this.stats.received++;
    const [, , org, project] = m.subject.split(".");
    let body: unknown;
    try {
      body = m.json();
    } catch {
      await this.deadLetter(m, org!, project!, { reason: "invalid_json", errors: [{ index: 0, code: "invalid_json", message: "message body is not JSON", details: [] }], message: m.string() });
      m.ack();
      return;
    }
    const p = await this.deps.projects.getActiveCached(project!);
    if (!p || p.organization_id !== org) {
      await this.deadLetter(m, org!, project!, { reason: "project_not_found", errors: [{ index: 0, code: "project_not_found", message: `project ${project} not found in organization ${org}`, details: [] }], message: body });
      m.ack();
      return;
    }
    const raw = body !== null && typeof body === "object" && Array.isArray((body as { logs?: unknown }).logs) ? (body as { logs: unknown[] }).logs : [body];
    // A log without a key gets one from its place in the feed, so a redelivered message
    // (after a crash or a storage failure) is a duplicate, never a second copy.
    const answer = await this.deps.writer.writeBatch({ organization_id: org!, project_id: project! }, raw, {
      atomic: false,
      at: ["message", "logs"],
      generatedKey: (i) => `ingest:${m.seq}:${i}`,
    });
    if (answer.errors.some((e) => e.code === "storage_error")) {
      // Accepted ones are stored (and their keys claimed); a retry will see them as duplicates.
      throw new Error("log storage unavailable");
    }
    this.stats.accepted += answer.accepted;
    if (answer.errors.length > 0) {
      await this.deadLetter(m, org!, project!, { reason: "invalid_logs", errors: answer.errors, message: body });
    }
    m.ack();
  }
}

/** Largest dead letter, in bytes of JSON: well under NATS's 1 MB message limit. */
export const MAX_LETTER_BYTES = 512 * 1024;
/** What is kept of a message too large to keep whole. */
const MESSAGE_HEAD_CHARS = 64 * 1024;
const ERRORS_KEPT = 100;

/**
 * The letter as JSON, cut to MAX_LETTER_BYTES. A letter over the limit could never be
 * stored, and its message would be retried forever: a 1,000-log message of bad logs
 * carries an error with details per log, and a non-JSON body grows when escaped. It loses,
 * in turn, the errors' details, the errors past the first 100 (counted), and the message
 * beyond its first 64 KB of text (its size kept).
 */
export function fitLetter(letter: DeadLetter): string {
  let text: string;
  try {
    text = JSON.stringify(letter);
  } catch {
    // Nested too deep to serialize (the stack overflows): keep what can be said of it.
    return JSON.stringify({ ...letter, message: { unserializable: "the message nests too deep to keep" }, truncated: true });
  }
  if (Buffer.byteLength(text) <= MAX_LETTER_BYTES) return text;
  const errors = letter.errors.slice(0, ERRORS_KEPT).map((e) => ({ ...e, details: [] }));
  const cut: DeadLetter & { errors_total?: number; truncated?: true } = { ...letter, errors, errors_total: letter.errors.length, truncated: true };
  text = JSON.stringify(cut);
  if (Buffer.byteLength(text) <= MAX_LETTER_BYTES) return text;
  const whole = typeof letter.message === "string" ? letter.message : JSON.stringify(letter.message);
  cut.message = { bytes: Buffer.byteLength(whole), head: whole.slice(0, MESSAGE_HEAD_CHARS) };
  return JSON.stringify(cut);
}

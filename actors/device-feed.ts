import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JetStreamClient, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";
import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import type { JetStreamPublisher } from "../infra/nats/jetstream-publisher.js";
import type { TopologyNames } from "../infra/nats/topology.js";
import type { OrganizationStore } from "../src/control/organizations.js";
import type { ProjectStore } from "../src/control/projects.js";
import { OVERFLOWING_NUMBER, overflowingNumberPath } from "../catalog/json-shape.js";
import { errorClass } from "../src/error-class.js";
import type { LogWriter } from "../src/logs/log-writer.js";
import { FeedAddresses, type LetterPlace } from "./feed-addresses.js";

/** What the dead-letter stream keeps of a message it could not accept. */
export interface DeadLetter {
  received_at: string;
  subject: string;
  /**
   * Device feed: `invalid_json`, `project_not_found`, `invalid_logs`, `invalid_subject`,
   * `unprocessable` (its processing failed in a way no retry mends). ClickHouse projector:
   * `not_queryable` (a stored log the log query cannot hold).
   */
  reason: "invalid_json" | "project_not_found" | "invalid_logs" | "invalid_subject" | "unprocessable" | "not_queryable";
  errors: { index: number; code: string; message: string; details: unknown[] }[];
  /** The message body as received (parsed when it was JSON). */
  message: unknown;
}

interface Logger {
  error(obj: unknown, msg?: string): void;
}

/** Storage did not take the message's valid logs: it comes again (those stored are then duplicates). */
class StorageUnavailable extends Error {
  override name = "StorageUnavailable";
}

/**
 * Failures of the message itself, not of a backend: JavaScript's own errors (a stack
 * overflow is a RangeError). Delivering it again would fail again, forever.
 */
const failsForGood = (err: unknown) => !(err instanceof StorageUnavailable) && (err instanceof RangeError || err instanceof TypeError || err instanceof SyntaxError);

const textDecoder = new TextDecoder();

/**
 * A message body as a letter keeps it: parsed when it is JSON, else its text, with what
 * is wrong with it. A number too large for a double is not taken as JSON: parsed, it would
 * be Infinity, stored as null.
 */
function bodyOf(data: Uint8Array): { json: true; body: unknown } | { json: false; body: string; problem: string } {
  const text = textDecoder.decode(data);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { json: false, body: text, problem: "message body is not JSON" };
  }
  const overflow = overflowingNumberPath(text, body);
  if (overflow) return { json: false, body: text, problem: `${["message", ...overflow].join(".")} is ${OVERFLOWING_NUMBER}; nothing of the message was stored` };
  return { json: true, body };
}

const oneError = (code: string, message: string) => [{ index: 0, code, message, details: [] }];

/**
 * Most letters of misshapen subjects being filed at once. Those messages were never
 * stored; past this (a flood while NATS is slow) they still get their reply, not a letter.
 */
const MAX_FILING = 1_000;

/**
 * Device gateways publish log envelopes (one log, or `{"logs":[...]}`) on
 * `{ns}.ingest.{organization}.{project}`. Each is handled exactly like the batch route,
 * through the same LogWriter; what fails validation goes to the dead-letter stream with
 * its errors, and what fails for lack of storage is retried. Every message gets an answer
 * a gateway can see: JetStream's ack of the stored message, then its letter in the dead
 * letters of the project it names (or, when its project does not exist, of its
 * organization's default project); a message on a subject of another shape, which no
 * stream keeps, a NATS reply when it asked for one, and a letter where it can be filed
 * (see FeedAddresses). What names no organization of the service has its letter in the
 * operator's dead letters only.
 */
export class DeviceFeed {
  private messages: ConsumerMessages | null = null;
  private loop: Promise<void> | null = null;
  private readonly subscriptions: Subscription[] = [];
  /** Answers to misshapen subjects under way, awaited by stop(). */
  private readonly answering = new Set<Promise<void>>();
  private readonly encoder = new TextEncoder();
  private readonly addresses: FeedAddresses;
  /** `to_operator`: letters no project reads; `replied`: NATS replies to misshapen subjects; `unfiled`: their letters not filed (MAX_FILING). */
  readonly stats = { received: 0, accepted: 0, dead_lettered: 0, to_operator: 0, replied: 0, unfiled: 0 };

  constructor(
    private readonly deps: {
      nc: NatsConnection;
      js: JetStreamClient;
      jsm: JetStreamManager;
      names: TopologyNames;
      projects: ProjectStore;
      orgs: Pick<OrganizationStore, "get">;
      writer: LogWriter;
      publisher: JetStreamPublisher;
      log: Logger;
    },
    private readonly consumer: string,
  ) {
    this.addresses = new FeedAddresses(deps.names, deps.projects, deps.orgs);
  }

  async start(): Promise<void> {
    const { jsm, js, names, nc } = this.deps;
    await jsm.consumers
      .add(names.ingestStream, { durable_name: this.consumer, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, ack_wait: 30_000_000_000, max_ack_pending: 1_000 })
      .catch((err) => {
        const message = String((err as Error).message);
        if (!message.includes("already in use") && !message.includes("exists")) throw err;
      });
    const c = await js.consumers.get(names.ingestStream, this.consumer);
    this.messages = await c.consume({ max_messages: 256 });
    const messages = this.messages;
    this.loop = (async () => {
      for await (const m of messages) await this.handle(m).catch((err) => this.failed(m, err));
    })();
    // One instance of the queue group answers each message (several processes may run a feed).
    for (const subject of names.ingestSubjectsMisshapen) {
      this.subscriptions.push(nc.subscribe(subject, { queue: this.consumer, callback: (_err, msg) => this.answerMisshapen(msg) }));
    }
  }

  async stop(): Promise<void> {
    for (const s of this.subscriptions.splice(0)) s.unsubscribe();
    this.messages?.stop();
    await this.loop;
    await Promise.all(this.answering);
  }

  /** Files a letter; named by the message's place in the feed when it has one, so a redelivery files it once. */
  private async file(place: LetterPlace, dl: Omit<DeadLetter, "received_at">, msgId?: string): Promise<void> {
    const letter: DeadLetter = { received_at: new Date().toISOString(), ...dl };
    const subject = this.deps.names.deadLetterSubject(place.organization_id, place.project_id);
    await this.deps.publisher.publish(subject, this.encoder.encode(fitLetter(letter)), msgId === undefined ? undefined : { msgId });
    this.stats.dead_lettered++;
    if (place.operator) {
      this.stats.to_operator++;
      this.deps.log.error({ subject: dl.subject.slice(0, 200), reason: dl.reason }, "device feed: a message names no organization of this service; its letter is in the operator's dead letters");
    }
  }

  private async handle(m: JsMsg): Promise<void> {
    this.stats.received++;
    const msgId = `dead-letter:${m.seq}`;
    const to = await this.addresses.ofStored(m.subject);
    const parsed = bodyOf(m.data);
    const { body } = parsed;
    if (to.subjectProblem !== undefined) {
      await this.file(to.place, { subject: m.subject, reason: "invalid_subject", errors: oneError("invalid_subject", to.subjectProblem), message: body }, msgId);
    } else if (!parsed.json) {
      await this.file(to.place, { subject: m.subject, reason: "invalid_json", errors: oneError("invalid_json", parsed.problem), message: body }, msgId);
    } else if (to.projectProblem !== undefined) {
      await this.file(to.place, { subject: m.subject, reason: "project_not_found", errors: oneError("project_not_found", to.projectProblem), message: body }, msgId);
    } else {
      await this.write(m, to.place, body, msgId);
    }
    m.ack();
  }

  private async write(m: JsMsg, place: LetterPlace, body: unknown, msgId: string): Promise<void> {
    const raw = body !== null && typeof body === "object" && Array.isArray((body as { logs?: unknown }).logs) ? (body as { logs: unknown[] }).logs : [body];
    // A log without a key gets one from its place in the feed, so a redelivered message
    // (after a crash or a storage failure) is a duplicate, never a second copy.
    const answer = await this.deps.writer.writeBatch({ organization_id: place.organization_id, project_id: place.project_id }, raw, {
      source: "feed",
      atomic: false,
      at: ["message", "logs"],
      generatedKey: (i) => `ingest:${m.seq}:${i}`,
    });
    // Accepted ones are stored (and their keys claimed); a retry will see them as duplicates.
    if (answer.errors.some((e) => e.code === "storage_error")) throw new StorageUnavailable("log storage unavailable");
    this.stats.accepted += answer.accepted;
    if (answer.errors.length > 0) await this.file(place, { subject: m.subject, reason: "invalid_logs", errors: answer.errors, message: body }, msgId);
  }

  /** A message that failed: lettered once when no retry can mend it, else delivered again in a second. */
  private async failed(m: JsMsg, err: unknown): Promise<void> {
    if (failsForGood(err)) {
      try {
        const to = await this.addresses.ofStored(m.subject);
        const message = `the message could not be processed (${errorClass(err).error}): it is not retried`;
        await this.file(to.place, { subject: m.subject, reason: "unprocessable", errors: oneError("unprocessable", message), message: bodyOf(m.data).body }, `dead-letter:${m.seq}`);
        m.ack();
        return;
      } catch (e) {
        err = e;
      }
    }
    this.deps.log.error({ seq: m.seq, ...errorClass(err) }, "device feed message failed; will retry");
    m.nak(1_000);
  }

  /**
   * A message on `{ns}.ingest` with fewer or more than two tokens: no stream keeps it, so
   * this is its only reader. It gets a reply when it asked for one (shaped as JetStream's
   * error answer, so a JetStream publish fails with the description), and a letter where
   * the tokens it has name a project or an organization.
   */
  private answerMisshapen(msg: Msg): void {
    this.stats.received++;
    const description = this.addresses.misshapenProblem(msg.subject);
    if (msg.reply) {
      msg.respond(this.encoder.encode(JSON.stringify({ error: { code: 400, description } })));
      this.stats.replied++;
    }
    if (this.answering.size >= MAX_FILING) {
      this.stats.unfiled++;
      return;
    }
    const done = (async () => {
      const place = await this.addresses.ofMisshapen(msg.subject);
      await this.file(place, { subject: msg.subject, reason: "invalid_subject", errors: oneError("invalid_subject", description), message: bodyOf(msg.data).body });
    })()
      .catch((err) => this.deps.log.error(errorClass(err), "device feed: filing the letter of a misshapen subject failed"))
      .finally(() => this.answering.delete(done));
    this.answering.add(done);
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

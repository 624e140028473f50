import type { JetStreamClient, JsMsg } from "@nats-io/jetstream";
import type { TopologyNames } from "../infra/nats/topology.js";
import { isIdToken } from "../src/ids.js";
import { fitLetter, type DeadLetter } from "./device-feed.js";

/** Why a message of the log stream was parked: it is no log the service wrote. */
export const UNREADABLE_LOG_MESSAGE = "unreadable_log_message";

/** A subject token a dead-letter subject can carry; any other (a forged subject's) reads as `_`. */
const token = (t: string | undefined) => (isIdToken(t) ? t : "_");

const textDecoder = new TextDecoder();
const textEncoder = new TextEncoder();

/** The body as a letter keeps it: parsed when it is JSON, else its text. */
function bodyOf(data: Uint8Array): unknown {
  const text = textDecoder.decode(data);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Parks a message of the log stream that the write path did not write in the dead
 * letters of the project its subject names (`{ns}.log.{partition}.{organization}.{project}.…`),
 * where GET /v1/dead-letters shows it. Named by its stream sequence, so parking it again
 * (a redelivery, or another reader parking it too) keeps one letter within the dead-letter
 * stream's duplicate window.
 */
export async function parkLogMessage(js: JetStreamClient, names: TopologyNames, m: Pick<JsMsg, "seq" | "subject" | "data">, why: string): Promise<void> {
  const [, , , org, project] = m.subject.split(".");
  // The letter's reason is the stream's own, beside the device feed's (the route serves any string).
  const letter = {
    received_at: new Date().toISOString(),
    subject: m.subject,
    reason: UNREADABLE_LOG_MESSAGE,
    errors: [{ index: 0, code: UNREADABLE_LOG_MESSAGE, message: `${why}: the service did not write it, so no reader applies it`, details: [] }],
    message: bodyOf(m.data),
  } as Omit<DeadLetter, "reason"> & { reason: string } as DeadLetter;
  await js.publish(names.deadLetterSubject(token(org), token(project)), textEncoder.encode(fitLetter(letter)), { msgID: `parked-log:${m.seq}` });
}

/**
 * Parks a delivery of the log stream that is no log the write path wrote (published onto
 * a log subject by some other NATS client), logging it where an operator looks, then ends
 * its delivery for good; readers of the stream skip it too (src/logs/stored-message.ts).
 * A park that fails (NATS away) is delivered again a second later, never dropped.
 */
export function parkDelivery(deps: { js: JetStreamClient; names: TopologyNames; log: { error(o: unknown, m?: string): void; warn(o: unknown, m?: string): void } }, m: JsMsg, why: string): void {
  deps.log.error({ seq: m.seq, subject: m.subject, why }, "a log message the service did not write was parked in the dead letters");
  parkLogMessage(deps.js, deps.names, m, why).then(
    () => m.term(),
    (err: unknown) => {
      deps.log.warn({ err, seq: m.seq }, "parking a log message failed; it comes again");
      m.nak(1_000);
    },
  );
}

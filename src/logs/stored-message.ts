import type { TopologyNames } from "../../infra/nats/topology.js";
import { canonicalTimestamp } from "../../readmodels/lib/time.js";
import { isLogType } from "../../catalog/log-types.js";
import { isObject } from "./envelope.js";
import type { PatientLogMessage } from "./log-writer.js";

/** Whose history a log subject is: `{ns}.log.{partition}.{organization}.{project}.{patient}`. */
export interface LogSubjectOwner {
  organization_id: string;
  project_id: string;
  patient_id: string;
}

/**
 * A message of the log stream as its readers take it. One the write path did not write
 * (not JSON, another shape, a log that is not a stored log of this subject's patient)
 * reads as a message without logs, with `unreadable` saying what is wrong, so that every
 * reader (the state engine, /logs, the write path's history checks, a job's replay) skips
 * it alike and none of them fails or loops over it. Its sequence still counts as read.
 */
export interface StoredLogMessage extends PatientLogMessage {
  unreadable?: string;
}

/** The owner named by a log subject; null for a subject of another form (more, fewer or empty tokens). */
export function logSubjectOwner(names: Pick<TopologyNames, "logSubject">, subject: string): LogSubjectOwner | null {
  const parts = subject.split(".");
  if (parts.length !== 6 || parts.some((p) => p === "")) return null;
  const owner = { organization_id: parts[3]!, project_id: parts[4]!, patient_id: parts[5]! };
  return names.logSubject(owner.organization_id, owner.project_id, owner.patient_id) === subject ? owner : null;
}

const optionalString = (v: unknown) => v === undefined || typeof v === "string";

function isTrace(v: unknown): boolean {
  return typeof v === "string" || (isObject(v) && typeof v.object_type === "string" && typeof v.object_id === "string");
}

/**
 * What is wrong with one stored log, or null: the fields every reader relies on, of the
 * types the write path gives them, naming the subject's own patient. Payloads are not
 * checked against today's catalog: a log the catalog of its day accepted stays in history.
 */
function logProblem(l: unknown, owner: LogSubjectOwner): string | null {
  if (!isObject(l)) return "is not an object";
  if (typeof l.id !== "string" || !l.id.startsWith("log_")) return "has no log id";
  if (typeof l.log_type !== "string" || !isLogType(l.log_type)) return "has no log type of the catalog";
  if (l.organization_id !== owner.organization_id || l.project_id !== owner.project_id || l.patient_id !== owner.patient_id) {
    return "names another organization, project or patient than its subject";
  }
  if (canonicalTimestamp(l.timestamp) === null || canonicalTimestamp(l.ingested_at) === null) return "has no ISO 8601 timestamp or ingested_at";
  if (!isObject(l.payload)) return "has no payload object";
  if (!optionalString(l.idempotency_key)) return "has an idempotency_key that is not a string";
  if (l.trace !== undefined && !isTrace(l.trace)) return 'has a trace that is neither a string nor {"object_type","object_id"}';
  if (l.metadata !== undefined && !isObject(l.metadata)) return "has metadata that is not an object";
  return null;
}

/** A parsed message body checked as a patient's stored logs: the reason it is not one, or null. */
export function logMessageProblem(body: unknown, owner: LogSubjectOwner): string | null {
  if (!isObject(body) || !Array.isArray(body.logs)) return 'is not {"logs":[...]}';
  const logs: unknown[] = body.logs;
  for (let i = 0; i < logs.length; i++) {
    const problem = logProblem(logs[i], owner);
    if (problem !== null) return `log ${i} ${problem}`;
  }
  return null;
}

const textDecoder = new TextDecoder();

/** Decodes a message of `owner`'s log subject (see StoredLogMessage). */
export function decodeLogMessage(data: Uint8Array, owner: LogSubjectOwner): StoredLogMessage {
  let body: unknown;
  try {
    body = JSON.parse(textDecoder.decode(data));
  } catch {
    return { logs: [], unreadable: "the message is not JSON" };
  }
  const problem = logMessageProblem(body, owner);
  return problem === null ? (body as PatientLogMessage) : { logs: [], unreadable: `the message ${problem}` };
}


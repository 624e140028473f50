import type { LogPayloads } from "../../../catalog/payloads.js";
import type { LogEnvelope, LogOf } from "../../log-record.js";
import { insertSorted } from "../../lib/lists.js";
import { finite, items, text, truth, type Obj } from "../../lib/payload.js";
import { cmpTime, maxTime, minTime } from "../../lib/time.js";
import { withDoc, type ModuleState, type ReadModel } from "../../module.js";
import { autoTag } from "./tags.js";

export interface Turn {
  turn_index: number;
  speaker_label: string;
  text: string;
  timestamp: string;
  log_id: string;
}

/** One conversation, by conversation_id (a `conversation` log without one is keyed by its log id). */
export interface Conversation {
  conversation_id: string;
  /** "open" while only turns have arrived; "ended" once its `conversation` log is applied. */
  status: "open" | "ended";
  channel: string | null;
  language: string | null;
  participants: Obj[];
  started_at: string;
  last_activity_at: string;
  ended_at: string | null;
  duration_seconds: number | null;
  turn_count: number;
  flagged: boolean;
  flag_reason: string | null;
  /** The last 20 turns by turn_index. */
  recent_turns: Turn[];
}

export interface Memory {
  timestamp: string;
  log_id: string;
  /**
   * memory_report: the client's `type` tag, else one of the catalog's tags chosen from the
   * content by the service (see tags.ts); conversation end: "conversation_summary".
   */
  type: string;
  /** Who set `type`: "client" (the report's own tag) or "auto" (the service's tagging or a conversation summary). */
  type_source: "client" | "auto";
  content: string;
  origin: "memory_report" | "conversation";
  conversation_id: string | null;
}

export interface ConversationsDoc {
  /** The 50 conversations with the latest activity, ascending by last_activity_at. */
  conversations: Conversation[];
  /** The memory bank, the last 200 entries by event time. */
  memories: Memory[];
}

export const CONVERSATIONS_MAX = 50;
export const MEMORIES_MAX = 200;
const TURNS_MAX = 20;
const EXCERPT_CHARS = 280;

function blank(id: string, log: LogEnvelope): Conversation {
  return {
    conversation_id: id, status: "open", channel: null, language: null, participants: [], started_at: log.timestamp,
    last_activity_at: log.timestamp, ended_at: null, duration_seconds: null, turn_count: 0, flagged: false,
    flag_reason: null, recent_turns: [],
  };
}

/** Keeps conversations sorted by (last_activity_at, id) and bounded, like every recent list. */
function put(list: readonly Conversation[], c: Conversation): Conversation[] {
  const out = [...list.filter((x) => x.conversation_id !== c.conversation_id), c];
  out.sort((a, b) => cmpTime(a.last_activity_at, b.last_activity_at) || (a.conversation_id < b.conversation_id ? -1 : 1));
  return out.length > CONVERSATIONS_MAX ? out.slice(out.length - CONVERSATIONS_MAX) : out;
}

function touch(c: Conversation, log: LogEnvelope): Conversation {
  return { ...c, started_at: minTime(c.started_at, log.timestamp), last_activity_at: maxTime(c.last_activity_at, log.timestamp) };
}

function applyTurn(s: ModuleState<ConversationsDoc>, log: LogOf<"conversation_turn">): ModuleState<ConversationsDoc> {
  const p = log.payload;
  const id = text(p.conversation_id);
  const turn_index = finite(p.turn_index);
  // Any non-blank label, not only today's three: a turn stored under an older catalog keeps its own.
  const speaker_label = text(p.speaker_label);
  // What was said, even blank: a turn is kept as spoken.
  const said = typeof p.text === "string" ? p.text : undefined;
  if (id === undefined || turn_index === undefined || speaker_label === undefined || said === undefined) return s;
  const c = touch(s.doc.conversations.find((x) => x.conversation_id === id) ?? blank(id, log), log);
  const turn: Turn = { turn_index, speaker_label, text: said, timestamp: log.timestamp, log_id: log.id };
  const turns = [...c.recent_turns.filter((t) => t.turn_index !== turn_index), turn]
    .sort((a, b) => a.turn_index - b.turn_index)
    .slice(-TURNS_MAX);
  const next = { ...c, channel: c.channel ?? text(p.channel) ?? null, turn_count: Math.max(c.turn_count, turn_index + 1), recent_turns: turns };
  return withDoc(s, { ...s.doc, conversations: put(s.doc.conversations, next) });
}

/** Transcript turns as {speaker_label, text}: a plain-string transcript is one unlabelled turn. */
function transcriptTurns(p: LogPayloads["conversation"]): { speaker_label: string | null; text: string }[] {
  if (typeof p.transcript === "string") return [{ speaker_label: null, text: p.transcript }];
  return items(p.transcript).flatMap((t) => (typeof t.text === "string" ? [{ speaker_label: text(t.speaker_label) ?? null, text: t.text }] : []));
}

/** A deterministic extractive summary: what happened, and what the patient said first. */
function summarise(c: Conversation, said: string[]): string {
  const facts = [
    c.channel ? `via ${c.channel}` : null,
    `${c.turn_count} turn${c.turn_count === 1 ? "" : "s"}`,
    c.duration_seconds !== null ? `${c.duration_seconds}s` : null,
  ].filter((x) => x !== null);
  const flag = c.flagged ? ` Flagged${c.flag_reason ? `: ${c.flag_reason}` : ""}.` : "";
  const joined = said.join(" ").replace(/\s+/g, " ").trim();
  const excerpt = joined.length > EXCERPT_CHARS ? `${joined.slice(0, EXCERPT_CHARS - 1)}…` : joined;
  return `Conversation ${c.conversation_id} (${facts.join(", ")}).${flag}${excerpt ? ` Patient said: "${excerpt}"` : ""}`;
}

function applyEnd(s: ModuleState<ConversationsDoc>, log: LogOf<"conversation">): ModuleState<ConversationsDoc> {
  const p = log.payload;
  const id = text(p.conversation_id) ?? log.id;
  const c = touch(s.doc.conversations.find((x) => x.conversation_id === id) ?? blank(id, log), log);
  const transcript = transcriptTurns(p);
  const next: Conversation = {
    ...c, status: "ended", ended_at: c.ended_at === null ? log.timestamp : maxTime(c.ended_at, log.timestamp),
    channel: text(p.channel) ?? c.channel, language: text(p.language) ?? c.language,
    // A list, even of no usable participant, replaces the one held; anything else leaves it.
    participants: Array.isArray(p.participants) ? [...items(p.participants)] : c.participants,
    duration_seconds: finite(p.duration_seconds) ?? c.duration_seconds,
    turn_count: Math.max(c.turn_count, transcript.length), flagged: truth(p.flagged) ?? c.flagged,
    flag_reason: text(p.flag_reason) ?? c.flag_reason,
  };
  // Prefer the transcript; a conversation streamed as turns has its patient turns in recent_turns.
  const said = transcript.length > 0
    ? transcript.filter((t) => t.speaker_label === null || t.speaker_label === "patient").map((t) => t.text)
    : next.recent_turns.filter((t) => t.speaker_label === "patient").map((t) => t.text);
  const memory: Memory = {
    timestamp: log.timestamp, log_id: log.id, type: "conversation_summary", type_source: "auto", content: summarise(next, said),
    origin: "conversation", conversation_id: id,
  };
  return withDoc(s, { conversations: put(s.doc.conversations, next), memories: insertSorted(s.doc.memories, memory, MEMORIES_MAX) });
}

function applyMemory(s: ModuleState<ConversationsDoc>, log: LogOf<"memory_report">): ModuleState<ConversationsDoc> {
  const content = text(log.payload.content);
  if (content === undefined) return s;
  // The catalog: "when set, automatic tagging is skipped", so an untagged report is tagged here.
  // Any non-blank tag is the client's, not only the catalog's: a report stored under an older catalog keeps its own.
  const tag = text(log.payload.type);
  const memory: Memory = {
    timestamp: log.timestamp, log_id: log.id, type: tag ?? autoTag(content), type_source: tag === undefined ? "auto" : "client", content,
    origin: "memory_report", conversation_id: null,
  };
  return withDoc(s, { ...s.doc, memories: insertSorted(s.doc.memories, memory, MEMORIES_MAX) });
}

export const handles = ["conversation", "conversation_turn", "memory_report"] as const;

export const conversations: ReadModel<"conversations", ConversationsDoc, (typeof handles)[number]> = {
  key: "conversations",
  kind: "event",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ conversations: [], memories: [] }),
  evolve: (s, log) => {
    switch (log.log_type) {
      case "conversation_turn":
        return applyTurn(s, log);
      case "memory_report":
        return applyMemory(s, log);
      case "conversation":
        return applyEnd(s, log);
    }
  },
};

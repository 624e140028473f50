import { Type } from "@sinclair/typebox";
import { entry, type CatalogEntry } from "../issues.js";
import type { LOG_GROUPS } from "../log-types.js";
import { Bool, Count, Enum, LanguageTag, List, Obj, Opt, ReqStr, Str, withSource } from "./common.js";

const SpeakerLabel = (o: { description?: string } = {}) => Enum(["patient", "agent", "clinician"], o);

export const Conversation = Obj(
  {
    conversation_id: Opt(Str({ description: "Shared with the conversation_turn events of the same session" })),
    channel: Opt(Str()),
    duration_seconds: Opt(Count()),
    language: Opt(LanguageTag()),
    participants: Opt(List(Obj({ role: Opt(Str({ description: "Such as patient, agent, clinician" })), user_id: Opt(Str()) }))),
    transcript: Opt(
      Type.Union([Str(), List(Obj({ speaker_label: SpeakerLabel(), text: Str() }))], {
        description: "A plain string or an array of structured turns (speaker_label, text)",
      }),
    ),
    flagged: Opt(Bool()),
    flag_reason: Opt(Str()),
    ...withSource,
  },
  {
    description:
      "One event per conversation end; triggers memory and conversation state. Do not mix with conversation_turn for the same session.",
  },
);

export const ConversationTurn = Obj({
  conversation_id: ReqStr({ description: "Same within a session" }),
  turn_index: Count({ description: "Increasing from 0 within a session" }),
  speaker_label: SpeakerLabel(),
  text: ReqStr(),
  channel: Opt(Str()),
  ...withSource,
});

export const MEMORY_TAGS = [
  "interests_concerns", "mood_stress", "daily_functions_of_living", "symptom_context", "health_history",
  "nutrition_related", "diagnosis", "treatment", "social_determinants_of_health", "lab_and_vitals",
  "clinical_observations",
] as const;

export const MemoryReport = Obj(
  {
    content: ReqStr({ description: "Self-contained statement" }),
    type: Opt(Enum(MEMORY_TAGS, { description: "Memory category tag; when set, automatic tagging is skipped" })),
    ...withSource,
  },
  { description: "Stored in the memory bank only; no direct state update." },
);

export const conversationEntries = {
  conversation: entry(Conversation),
  conversation_turn: entry(ConversationTurn),
  memory_report: entry(MemoryReport),
} satisfies Record<(typeof LOG_GROUPS)["conversation"][number], CatalogEntry>;

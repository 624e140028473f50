import { Type } from "@sinclair/typebox";
import { Nullable, OpenObject } from "../../schemas.js";

export const PatientParams = Type.Object({ pid: Type.String({ minLength: 1, maxLength: 64, description: "Patient id" }) });

export const ModuleRead = Type.Object({
  module_type: Type.String(),
  payload: OpenObject,
  created_at: Nullable(Type.String({ description: "Event time of the first log that changed the module" })),
  updated_at: Nullable(Type.String({ description: "Event time of the latest log that changed the module" })),
});

const Trace = Nullable(Type.Union([Type.String(), Type.Object({ object_type: Type.String(), object_id: Type.String() })]));

export const LogRowSchema = Type.Object({
  id: Type.String(),
  type: Type.String(),
  timestamp: Type.String(),
  ingested_at: Type.String(),
  payload: OpenObject,
  trace: Trace,
});

export const EventRowSchema = Type.Object({
  id: Type.String(),
  trigger: Type.String(),
  log_type: Type.String(),
  status: Type.String({ description: "applied (changed state) or no_change" }),
  triggered_at: Type.String({ description: "When the log was accepted" }),
  completed_at: Type.String({ description: "When it was applied" }),
  source_event_log_id: Type.String(),
  changes: Type.Array(
    Type.Object({ module_type: Type.String(), kind: Type.String(), op: Type.String(), fields: Type.Optional(Type.Array(Type.String())) }),
  ),
});

export const BlockSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  text: Type.String(),
  segment: Type.String({ description: "week, long_term or temp" }),
  refs: Type.Array(Type.String(), { description: "Ids of the logs the block's facts came from" }),
  data: Type.Unknown(),
});

/** A comma-separated list in a query string (`?modules=a,b`). */
export const csv = (v: string | undefined) => (v === undefined || v === "" ? undefined : v.split(",").map((s) => s.trim()).filter(Boolean));

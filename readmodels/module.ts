import type { LogType } from "../catalog/log-types.js";
import type { Clocks } from "./lib/clocks.js";
import type { TypedLog } from "./log-record.js";
import type { ModulePayloads } from "./payloads.js";

export { STABLE_MODULES, EVENT_MODULES, type StableKey, type EventKey, type ModuleKey } from "../catalog/module-keys.js";
import type { ModuleKey, StableKey } from "../catalog/module-keys.js";
export type ModuleKind = "stable" | "event";

/** What a module's evolve folds: its document (the payload clients read) and its write clocks. */
export interface ModuleState<D> {
  readonly doc: D;
  readonly clocks: Clocks;
}

/**
 * What a module may know besides its own state and the log. Reads return other modules'
 * payloads as they stood before the current log, so a module's result never depends on
 * the order modules are visited within one log.
 */
export interface ModuleContext {
  readonly patient_id: string;
  /** IANA zone: the day of a reading that has no local_date. */
  readonly timezone: string;
  read<K extends ModuleKey>(key: K): Readonly<ModulePayloads[K]> | undefined;
  /**
   * Another module's payload as this log has left it: `read`'s unless that module handles
   * this log too and comes before the reader in its routing (the medication list a list
   * update makes, for adherence's schedule).
   */
  readAfter<K extends ModuleKey>(key: K): Readonly<ModulePayloads[K]> | undefined;
}

/**
 * One read model: key `K`, document `D`, handling the log types `H`. `evolve` gets only
 * those (routing.ts sends it no other; a test checks `handles` against it), with their
 * payloads typed, so a switch on `log.log_type` narrows the payload.
 */
export interface ReadModel<K extends ModuleKey, D, H extends LogType = LogType> {
  readonly key: K;
  readonly kind: K extends StableKey ? "stable" : "event";
  /** Bump when the document shape or the rules change: the module is then rebuilt by replay. */
  readonly version: number;
  /** Log types this module reacts to; must equal what routing.ts sends it (a test checks). */
  readonly handles: readonly H[];
  /** Modules it reads through the context: rebuilding one of them rebuilds this one too. */
  readonly reads: readonly ModuleKey[];
  initial(): D;
  /** Pure: no clock, randomness or I/O; never mutates its inputs; returns `state` when nothing changed. */
  evolve(state: ModuleState<D>, log: TypedLog<H>, ctx: ModuleContext): ModuleState<D>;
}

/** Wraps a new document, keeping the state object when the document did not change. */
export function withDoc<D>(state: ModuleState<D>, doc: D, clocks: Clocks = state.clocks): ModuleState<D> {
  return doc === state.doc && clocks === state.clocks ? state : { doc, clocks };
}

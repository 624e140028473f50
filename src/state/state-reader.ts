import { emptyStored } from "./apply-logs.js";
import { MODEL_FINGERPRINT, type PatientStateStore, type StoredPatientState } from "../../infra/redis/state-store.js";
import { moduleReadJson } from "../../infra/redis/module-read-json.js";
import { AppError, notFound } from "../errors.js";
import type { Patient, PatientStore } from "../control/patients.js";
import type { Principal } from "../auth/scopes.js";
import { EVENT_MODULES, STABLE_MODULES, type EventKey, type ModuleKey, type StableKey } from "../../readmodels/module.js";
import { MODELS, MODULE_KEYS } from "../../readmodels/registry.js";
import { moduleEntry, toModuleRead } from "../../readmodels/patient-state.js";
import { isViewType, renderView, VIEW_INPUTS, VIEW_TYPES, type View, type ViewType } from "../../readmodels/views/index.js";
import { currentCachedView, encodeCachedView } from "./view-cache.js";

/** Which patient, in which tenancy: what the engine is asked to load, compile or touch. */
export interface PatientKey {
  patient_id: string;
  organization_id: string;
  project_id: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface ReadOptions {
  /** Longest a read waits for the patient's accepted logs to be applied. @default 2_000 ms */
  maxWaitMs: number;
}

/** A state snapshot as read, with whether it includes every log accepted before the read. */
export interface Snapshot {
  stored: StoredPatientState;
  /** False when the wait ran out before the state caught up (the answer says so in a header). */
  current: boolean;
  /** The stored copy of the view the read asked for, fetched with the state (see viewOf). */
  cachedView?: string | null;
  /** The modules read, as stored text (see stableModulesJson). */
  raw?: Partial<Record<ModuleKey, string>>;
}

/** The state was compiled with the patient record's current time zone and date of birth. */
const recordMatches = (stored: StoredPatientState, patient: Patient): boolean =>
  stored.state.timezone === patient.timezone && stored.state.date_of_birth === (patient.date_of_birth ?? null);

/**
 * The read side shared by REST and MCP: tenancy checks, read-your-writes, modules and
 * views. A read first learns the highest stream sequence accepted for the patient, then
 * waits (bounded) until the stored state has applied it.
 */
export class StateReader {
  constructor(
    private readonly deps: {
      store: PatientStateStore;
      patients: PatientStore;
      options: ReadOptions;
      /** Highest stream sequence stored on the patient's subject (0: none). */
      lastStoredSeq: (scope: { organization_id: string; project_id: string }, patientId: string) => Promise<number>;
      /** Asks the state engine to load (and so rebuild) a patient; `replay`: compile it again from the log even if Redis holds it. */
      touch: (input: PatientKey, replay?: boolean) => Promise<void>;
      /** The time of a read, which views count their week back from. @default the wall clock */
      now?: () => string;
    },
  ) {}

  /** Has the engine compile a patient's state again from its log (its time zone or date of birth changed). */
  async recompile(input: PatientKey): Promise<void> {
    await this.deps.touch(input, true);
  }

  /** The patient, if the caller may see it: same project, and the token's own patient. */
  async authorize(principal: Principal, patientId: string): Promise<Patient> {
    if (principal.patient_id !== undefined && principal.patient_id !== patientId) throw notFound("patient", patientId);
    const patient = await this.deps.patients.getActive(principal.project_id, patientId);
    if (!patient) throw notFound("patient", patientId);
    return patient;
  }

  /**
   * The patient's state with the `modules` a read needs (all by default), once it holds
   * every log accepted before the read (bounded wait).
   */
  async snapshot(principal: Principal, patientId: string, modules: readonly ModuleKey[] = MODULE_KEYS, view?: ViewType): Promise<Snapshot> {
    const patient = await this.authorize(principal, patientId);
    return this.caughtUp(principal, patient, modules, view);
  }

  /** Like snapshot, with the modules left as stored text: for reads that answer them whole. */
  async rawSnapshot(principal: Principal, patientId: string, modules: readonly ModuleKey[]): Promise<Snapshot> {
    const patient = await this.authorize(principal, patientId);
    return this.caughtUp(principal, patient, modules, undefined, false);
  }

  /** The read-your-writes wait of `snapshot`, for a patient the caller may already see. */
  private async caughtUp(principal: Principal, patient: Patient, modules: readonly ModuleKey[], view?: ViewType, parse = true): Promise<Snapshot> {
    const { store } = this.deps;
    const patientId = patient.id;
    const scope = { organization_id: principal.organization_id, project_id: principal.project_id, patient_id: patientId };
    let accepted = 0;
    const deadline = Date.now() + this.deps.options.maxWaitMs;
    let touched = false;
    for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
      const part = await store.loadPart(principal.project_id, patientId, modules, view, parse);
      const stored = part.stored;
      const cachedView = part.view;
      accepted = Math.max(accepted, part.accepted);
      // The patient's time zone (or date of birth) changed since the state was compiled:
      // days and views follow them, so the engine compiles it again from the log (PUT asks too).
      const recordChanged = stored !== null && stored.applied_seq > 0 && !recordMatches(stored, patient);
      if (!touched && (!stored || stored.fingerprint !== MODEL_FINGERPRINT || recordChanged)) {
        // Redis lost the state (or an older reducer made it): JetStream knows what is
        // stored, and the engine rebuilds it by replay.
        touched = true;
        accepted = Math.max(accepted, await this.deps.lastStoredSeq(principal, patientId));
        if (accepted > 0) await this.deps.touch(scope, recordChanged);
      }
      if ((stored?.applied_seq ?? 0) >= accepted && (accepted === 0 || (stored?.fingerprint === MODEL_FINGERPRINT && !recordChanged))) {
        return { stored: stored ?? emptyStored(patientId, patient.timezone, principal.organization_id, principal.project_id, patient.date_of_birth), current: true, cachedView, raw: part.raw };
      }
      if (Date.now() >= deadline) {
        // No state at all for a patient with logs (Redis lost it and the engine could not
        // rebuild it in time): an empty answer would read as a patient without history.
        if (!stored && accepted > 0) {
          throw new AppError("unavailable", "the patient's state is being compiled again from its log; retry shortly", [{ type: "state_unavailable", message: "no compiled state yet" }], { headers: { "retry-after": "1" } });
        }
        return { stored: stored ?? emptyStored(patientId, patient.timezone, principal.organization_id, principal.project_id, patient.date_of_birth), current: false, cachedView, raw: part.raw };
      }
      await sleep(delay);
    }
  }

  stableModules(s: StoredPatientState, only?: string[]) {
    const keys = only && only.length > 0 ? only : [...STABLE_MODULES];
    for (const k of keys) assertModule(k, "stable");
    const modules: Record<string, ReturnType<typeof toModuleRead>> = {};
    for (const k of keys as StableKey[]) {
      const e = moduleEntry(s.state, k);
      if (e) modules[k] = toModuleRead(e);
    }
    return modules;
  }

  /**
   * The stable modules of a raw snapshot as the JSON object a read answers, built from
   * the stored text (moduleReadJson) in catalog order, modules without data left out.
   */
  stableModulesJson(snap: Snapshot, only?: string[]): string {
    const keys = only && only.length > 0 ? only : STABLE_MODULES;
    for (const k of keys) assertModule(k, "stable");
    let out = "{";
    for (const k of STABLE_MODULES) {
      const raw = keys.includes(k) ? snap.raw?.[k] : undefined;
      if (raw === undefined) continue;
      out += (out.length > 1 ? "," : "") + JSON.stringify(k) + ":" + moduleReadJson(raw);
    }
    return out + "}";
  }

  /** One event-state module of a raw snapshot as JSON text; a module with no data yet answers its empty payload. */
  eventModuleJson(snap: Snapshot, moduleType: string): string {
    assertModule(moduleType, "event");
    const raw = snap.raw?.[moduleType as EventKey];
    return raw === undefined ? JSON.stringify(this.eventModule(snap.stored, moduleType)) : moduleReadJson(raw);
  }

  eventModuleList(s: StoredPatientState) {
    return EVENT_MODULES.flatMap((k) => {
      const e = moduleEntry(s.state, k);
      return e ? [{ module_type: k, created_at: e.created_at, updated_at: e.updated_at }] : [];
    });
  }

  /** One event-state module; a known module with no data yet answers its empty payload. */
  eventModule(s: StoredPatientState, moduleType: string) {
    assertModule(moduleType, "event");
    const e = moduleEntry(s.state, moduleType as EventKey);
    if (e) return toModuleRead(e);
    return { module_type: moduleType, payload: MODELS[moduleType as EventKey].initial(), created_at: null, updated_at: null };
  }

  /**
   * A view as current as the state: the stored copy while none of its inputs changed
   * since it was rendered, else rendered now and stored for the next read (the engine
   * renders in the background only when it has caught up).
   */
  async view(s: StoredPatientState, viewType: string): Promise<View> {
    assertViewType(viewType);
    const at = this.now();
    return currentCachedView(await this.deps.store.loadView(s.state.patient_id, viewType), s, viewType, at) ?? this.renderAndKeep(s, viewType, at);
  }

  /** The time of this read. */
  now(): string {
    return this.deps.now?.() ?? new Date().toISOString();
  }

  /**
   * One view as current as the patient's state, reading no module when the stored view is
   * still current (the common case: only its inputs' last change matters).
   */
  async viewOf(principal: Principal, patientId: string, viewType: string): Promise<{ snap: Snapshot; view: View }> {
    assertViewType(viewType);
    const at = this.now();
    const meta = await this.snapshot(principal, patientId, [], viewType);
    const cached = currentCachedView(meta.cachedView ?? null, meta.stored, viewType, at);
    if (cached) return { snap: meta, view: cached };
    // Stale or missing: the inputs, with the stored view again (the engine may have just
    // rendered it), in one round trip.
    const snap = await this.caughtUp(principal, await this.authorize(principal, patientId), VIEW_INPUTS[viewType], viewType);
    return { snap, view: currentCachedView(snap.cachedView ?? null, snap.stored, viewType, at) ?? this.renderAndKeep(snap.stored, viewType, at) };
  }

  private renderAndKeep(s: StoredPatientState, viewType: ViewType, readAt: string): View {
    const view = renderView(viewType, s.state, readAt);
    // Only a state that includes every module the view reads is worth keeping.
    if (s.fingerprint === MODEL_FINGERPRINT && VIEW_INPUTS[viewType].every((k) => s.module_seq[k] === undefined || moduleEntry(s.state, k))) {
      this.deps.store.saveViews(s.state.patient_id, { [viewType]: encodeCachedView(s, view) }).catch(() => undefined);
    }
    return view;
  }

  async allViews(s: StoredPatientState): Promise<View[]> {
    return Promise.all(VIEW_TYPES.map((t) => this.view(s, t)));
  }
}

/** Event-state module names the hosted product's clients use for ours. */
const EVENT_MODULE_ALIASES: Readonly<Record<string, EventKey>> = { behavioral_state: "emotional_state" };

/** An event-state module name as we key it: an alias (behavioral_state) as its module, any other name as given. */
export function eventModuleKey(name: string): string {
  return Object.hasOwn(EVENT_MODULE_ALIASES, name) ? EVENT_MODULE_ALIASES[name]! : name;
}

export function assertModule(key: string, kind: "stable" | "event"): asserts key is ModuleKey {
  const list: readonly string[] = kind === "stable" ? STABLE_MODULES : EVENT_MODULES;
  if (!list.includes(key)) {
    throw new AppError("not_found", `unknown ${kind === "stable" ? "stable" : "event-state"} module "${key}"; known: ${list.join(", ")}`, [
      { type: "unknown_module", message: `known modules: ${list.join(", ")}`, input_value: key },
    ]);
  }
}

export function assertViewType(t: string): asserts t is ViewType {
  if (!isViewType(t)) {
    throw new AppError("not_found", `unknown view type "${t}"; known: ${VIEW_TYPES.join(", ")}`, [
      { type: "unknown_view", message: `known view types: ${VIEW_TYPES.join(", ")}`, input_value: t },
    ]);
  }
}

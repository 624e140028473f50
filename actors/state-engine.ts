import type { JetStreamClient, JetStreamManager, JsMsg } from "@nats-io/jetstream";
import { createActor, type ActorRefFrom } from "xstate";
import type { NatsConnection } from "@nats-io/transport-node";
import { partitionOf } from "../infra/nats/partitions.js";
import { PartitionReaders } from "./partition-readers.js";
import type { PublishedMessageReader, PublishedMessages } from "../infra/nats/published-messages.js";
import type { TopologyNames } from "../infra/nats/topology.js";
import type { PatientStore } from "../src/control/patients.js";
import type { PatientLogMessage } from "../src/logs/log-writer.js";
import { decodeLogMessage, logSubjectOwner, type StoredLogMessage } from "../src/logs/stored-message.js";
import { PatientLog } from "../src/logs/patient-log.js";
import { PatientFold } from "./patient-fold.js";
import { TouchServer } from "./touch-server.js";
import { parkDelivery } from "./parked-messages.js";
import { patientActorMachine, type PatientActorInput, type PatientActorStart } from "./patient-actor.js";
import { providePatientActor } from "./patient-actor-wiring.js";
import { Mailbox } from "./mailbox.js";
import { DeferredRenders } from "./deferred-renders.js";
import { JetStreamDelivery } from "./jetstream-delivery.js";
import { IdleGate } from "./idle-gate.js";
import { InflightBudget } from "./inflight-budget.js";
import { HeldDeliveries } from "./held-deliveries.js";
import { PatientPlaces } from "./patient-places.js";
import { engineSettings, type StateEngineOptions } from "./state-engine-options.js";
import type { PatientStateStore } from "../infra/redis/state-store.js";

export type { StateEngineOptions } from "./state-engine-options.js";

type PatientActor = ActorRefFrom<typeof patientActorMachine>;

interface Logger {
  error(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
}

/** Actor states with nothing to apply (see PatientPlaces). */
const EVICTABLE: ReadonlySet<string> = new Set(["idle", "settling", "waiting", "rendering"]);

/**
 * Turns the log stream into compiled patient state: one durable JetStream consumer per
 * partition feeds per-patient actors (see patient-actor.ts), created on a patient's first
 * message and passivated when idle, so memory stays bounded however many patients there
 * are. A log it has acknowledged is in saved state.
 */
export class StateEngine {
  /** The patients held in memory, least recently fed first. */
  private readonly actors = new Map<string, PatientActor>();
  private readonly places: PatientPlaces<PatientActorInput>;
  private readonly mailboxes = new Map<string, Mailbox>();
  private stopping = false;
  /** Patients whose actor failed: the next one replays from JetStream, not trusting order. */
  private readonly replayNext = new Set<string>();
  private readonly readers: PartitionReaders;
  private readonly touches = new TouchServer((input, replay) => this.touch(input, replay));
  /** Deliveries of each partition not yet acknowledged: a partition given up waits for them (see removePartition). */
  private readonly pending = new Map<number, number>();
  /** Deliveries not yet applied: views render only when there are none. */
  private readonly idle = new IdleGate();
  private readonly inflight: InflightBudget;
  private readonly held: HeldDeliveries;
  private readonly deferred: DeferredRenders;
  /** applied_logs counts logs folded: a replay folds the patient's whole history again. */
  readonly stats = { delivered: 0, started: 0, applied_logs: 0, replays: 0, failures: 0, passivated: 0, parked: 0, peak_active: 0 };
  private readonly machine;
  private readonly maxActive: number;
  private readonly published: PublishedMessageReader<PatientLogMessage> | undefined;

  constructor(
    private readonly deps: {
      js: JetStreamClient;
      jsm: JetStreamManager;
      names: TopologyNames;
      store: PatientStateStore;
      patients: PatientStore;
      log: Logger;
      now?: () => string;
      /** Messages this process's write path stored, as objects: what it hands over is not parsed again. */
      published?: PublishedMessages<PatientLogMessage>;
    },
    given: StateEngineOptions,
  ) {
    const options = engineSettings(given);
    this.maxActive = options.maxActive;
    this.places = new PatientPlaces({
      max: this.maxActive,
      held: () => this.actors.size,
      start: (input) => this.startActor(input),
      passivate: (pid) => this.actors.get(pid)?.send(PASSIVATE),
    });
    this.published = deps.published?.reader();
    this.inflight = new InflightBudget(options.maxInflightBytes);
    this.held = new HeldDeliveries(Math.floor(options.ackWaitMs / 3));
    // Read only while what is held stays under the in-flight budget (see InflightBudget):
    // a backlog of 6,000 hundred-log messages, read whole by consume(), took 1.9 GB and
    // 2,000 patients loading at once, and outlived its ack wait.
    this.readers = new PartitionReaders({
      js: deps.js,
      jsm: deps.jsm,
      stream: deps.names.logsStream,
      durable: (p) => ({ family: options.durablePrefix ? `${options.durablePrefix}_p${p}_` : deps.names.stateConsumers(p), filter: deps.names.logSubjectsOfPartition(p) }),
      pullBytes: options.pullBytes,
      config: { ack_wait: options.ackWaitMs * 1_000_000 },
      room: () => this.inflight.room(),
      dispatch: (m, p) => this.dispatch(m, p),
      log: deps.log,
      name: "state engine",
    });
    const fold = new PatientFold({
      store: deps.store,
      patients: deps.patients,
      log: new PatientLog(deps),
      stats: this.stats,
      unrendered: (pid) => this.deferred.take(pid),
      replayNext: (pid) => this.replayNext.delete(pid),
    });
    this.deferred = new DeferredRenders({
      idle: this.idle,
      store: deps.store,
      log: deps.log,
      held: (pid) => this.activeActor(pid) !== undefined,
      render: (stored, types) => fold.renderViews(stored, types),
    });
    const now = deps.now ?? (() => new Date().toISOString());
    this.machine = providePatientActor(
      {
        idle: this.idle,
        load: (input, at) => fold.load(input, at),
        drain: (stored, mailbox, clock) => fold.drain(stored, mailbox, clock),
        render: (stored, types) => fold.renderViews(stored, types),
        log: deps.log,
        now,
      },
      { idleMs: options.idleMs, viewDebounceMs: options.viewDebounceMs, renderWaitMs: options.renderWaitMs },
    );
  }

  activeCount(): number {
    return this.actors.size;
  }

  /** Bytes of delivered messages not yet acknowledged: now, at most so far, and the limit. */
  inflightStats(): ReturnType<InflightBudget["stats"]> {
    return this.inflight.stats();
  }

  /** The partitions this engine reads. */
  partitions(): number[] {
    return this.readers.held();
  }

  /** Applies every partition, without leases: for a process alone on its namespace (tests, benches). */
  async start(): Promise<void> {
    for (let p = 0; p < this.deps.names.partitions; p++) await this.addPartition(p);
  }

  /** Starts applying `partition`'s logs (its lease is ours, from `epoch` on). */
  async addPartition(partition: number, epoch = 0): Promise<void> {
    if (this.stopping) return;
    await this.readers.add(partition, epoch);
    this.touches.add(partition);
  }

  /**
   * Stops applying `partition`'s logs (its lease is gone, or being handed over): no more
   * are read, the ones taken get up to `settleMs` to be saved and acknowledged, and its
   * patients' actors are passivated, so that a later holder's saves are not met by this
   * member's stale copies. What is not done by then comes again to the next holder; the
   * fenced saves (PatientStateStore.save) keep a late save here from undoing its work.
   */
  async removePartition(partition: number, settleMs = 2_000): Promise<void> {
    this.touches.remove(partition);
    await this.readers.remove(partition);
    // Patients still waiting for a place: their deliveries go back (the next holder reads them).
    for (const pid of this.places.drop((p) => partitionOf(p, this.deps.names.partitions) === partition)) {
      this.mailboxes.get(pid)?.failAll();
      this.mailboxes.delete(pid);
    }
    const deadline = Date.now() + settleMs;
    while ((this.pending.get(partition) ?? 0) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const [patientId, actor] of this.actors) {
      if (partitionOf(patientId, this.deps.names.partitions) === partition) actor.send({ type: "PASSIVATE" });
    }
  }

  /**
   * Wakes a patient's actor without a new log: its load rebuilds state that Redis lost
   * or that an older reducer version compiled, or (`replay`) state compiled in a time
   * zone the patient no longer has. Readers and PUT /v1/patients ask for it (see StateReader).
   */
  touch(input: PatientActorInput, replay = false): void {
    // The replay reads the patient record again (its time zone may have changed).
    if (replay) this.replayNext.add(input.patient_id);
    this.actorFor(input).send({ type: "RELOAD" });
  }

  /**
   * Serves touch requests from other processes (api processes, other members) on
   * `{subject}.{partition}` for each partition this engine applies, from now on: a patient
   * is woken only by the member working its partition.
   */
  serveTouch(nc: NatsConnection, subject: string): void {
    this.touches.serve(nc, subject, this.readers.held());
  }

  /** Whether this engine applies the patient's partition now (a touch can be served here). */
  works(patientId: string): boolean {
    return this.readers.has(partitionOf(patientId, this.deps.names.partitions));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.touches.removeAll();
    this.inflight.release();
    this.held.stop();
    this.places.clear();
    await this.readers.removeAll();
    for (const a of this.actors.values()) a.stop();
    this.actors.clear();
    await this.deferred.stop();
  }

  private dispatch(m: JsMsg, partition: number): void {
    this.stats.delivered++;
    const owner = logSubjectOwner(this.deps.names, m.subject);
    // What this process's write path stored is handed over as it was written; the rest is checked.
    const body: StoredLogMessage | null = owner && (this.published?.take(m.seq) ?? decodeLogMessage(m.data, owner));
    if (!owner || !body || body.unreadable !== undefined) {
      // Not a log the write path wrote (see parkDelivery): never a patient's, never delivered again.
      this.stats.parked++;
      parkDelivery(this.deps, m, body?.unreadable ?? "the subject names no organization, project and patient");
      return;
    }
    const { organization_id, patient_id, project_id } = owner;
    this.idle.enter();
    const delivery = new JetStreamDelivery(m, body.logs, this.idle, this.inflight, this.pending, partition, this.held);
    this.pending.set(partition, (this.pending.get(partition) ?? 0) + 1);
    this.inflight.take(delivery.bytes);
    this.mailboxOf(patient_id).push(delivery);
    const existing = this.activeActor(patient_id);
    if (existing) {
      // Most recently fed last: eviction takes the patients whose logs stopped longest ago.
      this.actors.delete(patient_id);
      this.actors.set(patient_id, existing);
      existing.send(WAKE);
    } else if (!this.stopping) this.places.wait({ patient_id, organization_id, project_id });
  }

  private mailboxOf(patientId: string): Mailbox {
    let m = this.mailboxes.get(patientId);
    if (!m) {
      m = new Mailbox();
      this.mailboxes.set(patientId, m);
    }
    return m;
  }

  private activeActor(patientId: string): PatientActor | undefined {
    const a = this.actors.get(patientId);
    return a && a.getSnapshot().status === "active" ? a : undefined;
  }

  private actorFor(input: PatientActorInput): PatientActor {
    return this.activeActor(input.patient_id) ?? this.startActor(input);
  }

  /** A new actor; its mailbox already holds what woke it, before it loads. */
  private startActor(input: PatientActorInput): PatientActor {
    this.places.started(input.patient_id);
    this.stats.started++;
    this.places.makeRoom();
    const mailbox = this.mailboxOf(input.patient_id);
    const actor = createActor(this.machine, { input: { ...input, mailbox } satisfies PatientActorStart });
    const pid = input.patient_id;
    actor.subscribe({
      next: (snapshot) => {
        if (this.actors.get(pid) !== actor) return;
        this.places.update(pid, EVICTABLE.has(snapshot.value), () => actor.send(PASSIVATE));
      },
      complete: () => {
        if (this.actors.get(input.patient_id) === actor) {
          this.actors.delete(input.patient_id);
          this.places.gone(input.patient_id);
        }
        const last = actor.getSnapshot();
        if (last.value === "failed") {
          this.stats.failures++;
          this.replayNext.add(input.patient_id);
        } else {
          this.stats.passivated++;
          if (last.context.dirty.length > 0 && !this.stopping) this.deferred.defer(input.patient_id, last.context.dirty);
        }
        // Deliveries that came while it was stopping get a new actor; else the mailbox goes.
        if (mailbox.size() > 0 && !this.stopping) this.startActor(input);
        else if (this.mailboxes.get(input.patient_id) === mailbox && !this.activeActor(input.patient_id)) this.mailboxes.delete(input.patient_id);
        // Its place goes to the patient waiting longest.
        if (!this.stopping) this.places.fill();
      },
      error: (err) => this.deps.log.error({ err, patient_id: input.patient_id }, "patient actor crashed"),
    });
    this.actors.set(input.patient_id, actor);
    if (this.actors.size > this.stats.peak_active) this.stats.peak_active = this.actors.size;
    actor.start();
    return actor;
  }
}

const WAKE = { type: "WAKE" } as const;
const PASSIVATE = { type: "PASSIVATE" } as const;

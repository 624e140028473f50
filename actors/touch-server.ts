import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import type { PatientActorInput } from "./patient-actor.js";

/**
 * Touch requests from other processes (api processes, other members), served on
 * `{subject}.{partition}` for each partition this member applies, so that a patient is
 * woken only by the member working its partition. Partitions are followed before a
 * connection is given: serving starts with those held then.
 */
export class TouchServer {
  private server: { nc: NatsConnection; subject: string } | null = null;
  private readonly subs = new Map<number, Subscription>();

  constructor(private readonly touch: (input: PatientActorInput, replay: boolean) => void) {}

  /** Serves from now on, for `held` and every partition added later. */
  serve(nc: NatsConnection, subject: string, held: readonly number[]): void {
    this.server = { nc, subject };
    for (const p of held) this.add(p);
  }

  add(partition: number): void {
    if (!this.server || this.subs.has(partition)) return;
    const sub = this.server.nc.subscribe(`${this.server.subject}.${partition}`, {
      queue: "state-engine",
      callback: (_err, msg) => {
        try {
          const { replay, ...input } = msg.json<PatientActorInput & { replay?: boolean }>();
          this.touch({ organization_id: input.organization_id, project_id: input.project_id, patient_id: input.patient_id }, replay === true);
          msg.respond("ok");
        } catch {
          msg.respond("error");
        }
      },
    });
    this.subs.set(partition, sub);
  }

  remove(partition: number): void {
    this.subs.get(partition)?.unsubscribe();
    this.subs.delete(partition);
  }

  removeAll(): void {
    for (const p of [...this.subs.keys()]) this.remove(p);
  }
}

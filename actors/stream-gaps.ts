import type { JetStreamManager } from "@nats-io/jetstream";
import type { TopologyNames } from "../infra/nats/topology.js";
import type { LogSubjectOwner } from "../src/logs/stored-message.js";

/**
 * True when the patient's stored messages after sequence `from`, up to the last of `seqs`,
 * are exactly `seqs` (ascending): a state folded up to `from` with `seqs` applied on top
 * then holds every message of the patient up to its new sequence.
 *
 * A member alone on a partition is delivered each patient's new messages in stream order,
 * so this always holds for it. Two members pulling one durable (a lapsed lease) split a
 * patient's messages between them: one may fold a later message while an earlier one is
 * still in the other's hands. Saved, that state's sequence would claim the earlier
 * message, and the other member, loading it, would skip that message as already applied
 * and acknowledge it: a log lost from the state for good. The fences in
 * PatientStateStore.save cannot see it (the sequences match), so it is checked here
 * against the stream: one direct get per message applied.
 */
export async function followsOn(
  deps: { jsm: JetStreamManager; names: Pick<TopologyNames, "logsStream" | "logSubject"> },
  owner: LogSubjectOwner,
  from: number,
  seqs: readonly number[],
): Promise<boolean> {
  const subject = deps.names.logSubject(owner.organization_id, owner.project_id, owner.patient_id);
  const next = await Promise.all(seqs.map((_, i) => deps.jsm.direct.getMessage(deps.names.logsStream, { seq: (i === 0 ? from : seqs[i - 1]!) + 1, next_by_subj: subject })));
  return next.every((m, i) => m?.seq === seqs[i]);
}

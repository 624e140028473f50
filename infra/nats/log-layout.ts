import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { isCasConflict } from "./lease-bucket.js";
import { migrateLegacyLogLayout, type MigrationOptions } from "./log-migration.js";
import { countAfter } from "./legacy-log-copy.js";
import { migrationUnfinished, type MigrationLog } from "./migration-lock.js";
import { DEFAULT_PARTITIONS } from "./partitions.js";
import type { TopologyNames } from "./topology.js";

/** Key of the namespace's log layout in its config bucket. */
export const LOG_LAYOUT_KEY = "log_layout";

/**
 * How the namespace's log stream is laid out. Version 1 (no record) had subjects
 * `{ns}.log.{org}.{project}.{patient}` and one durable; version 2 puts the partition
 * after `log.` and has one durable per partition.
 */
export interface LogLayout {
  version: 2;
  partitions: number;
  created_at: string;
}

/** PSS_PARTITIONS names another count than the namespace was created with. */
export class LogLayoutMismatchError extends Error {
  override name = "LogLayoutMismatchError";
  constructor(readonly namespace: string, readonly recorded: number, readonly requested: number) {
    super(
      `PSS_PARTITIONS=${requested}, but namespace "${namespace}" was created with ${recorded} partitions, and a namespace's partitions are fixed: ` +
        `unset PSS_PARTITIONS (the recorded ${recorded} is used) or set it to ${recorded}`,
    );
  }
}

export const isLogLayoutMismatch = (err: unknown): err is LogLayoutMismatchError => err instanceof LogLayoutMismatchError;

export interface LayoutDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  config: KV;
  names: TopologyNames;
  /** Where a migration says what it does (console when absent). */
  log?: MigrationLog;
  /** A migration's settings, for tests (see MigrationOptions). */
  migration?: Partial<MigrationOptions>;
}

async function readLayout(config: KV): Promise<LogLayout | null> {
  const e = await config.get(LOG_LAYOUT_KEY);
  if (!e || e.operation !== "PUT" || e.length === 0) return null;
  return e.json<LogLayout>();
}

/** Whether the log stream holds messages of the first layout (or its durable still exists). */
export async function hasLegacyLogs(deps: Pick<LayoutDeps, "jsm" | "names">): Promise<boolean> {
  const { jsm, names } = deps;
  const durable = await jsm.consumers.info(names.logsStream, names.legacyStateConsumer).then(() => true, () => false);
  if (durable) return true;
  // A counting consumer, not the stream's subject list: that lists every patient.
  return (await countAfter(jsm, names.logsStream, names.legacyLogSubjects)) > 0;
}

/**
 * The namespace's layout: the recorded one, else (a new namespace, or one written by the
 * first layout, which is migrated first) the one recorded now with `requested` or the
 * default count. `requested` other than the recorded count is refused.
 */
export async function resolveLogLayout(deps: LayoutDeps, requested: number | null): Promise<LogLayout> {
  for (;;) {
    const found = await readLayout(deps.config);
    if (found) {
      if (requested !== null && requested !== found.partitions) throw new LogLayoutMismatchError(deps.names.logsStream.replace(/_LOGS$/, "").toLowerCase(), found.partitions, requested);
      return found;
    }
    const layout: LogLayout = { version: 2, partitions: requested ?? DEFAULT_PARTITIONS, created_at: new Date().toISOString() };
    // A lock left without a record: a migration stopped after its last copy, before recording.
    if ((await hasLegacyLogs(deps)) || (await migrationUnfinished(deps.config))) {
      // Writes the record itself once every log is under its new subject.
      await migrateLegacyLogLayout(deps, layout);
      continue;
    }
    try {
      await deps.config.create(LOG_LAYOUT_KEY, JSON.stringify(layout));
      return layout;
    } catch (err) {
      // Another member recorded it first: take theirs (and check it) on the next turn.
      if (!isCasConflict(err)) throw err;
    }
  }
}

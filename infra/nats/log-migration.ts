import type { LayoutDeps, LogLayout } from "./log-layout.js";

/**
 * Moves every message of the first layout's subjects to the partitioned ones and records
 * `layout` (see docs/operations.md).
 */
export async function migrateLegacyLogLayout(deps: LayoutDeps, layout: LogLayout): Promise<void> {
  void deps;
  void layout;
  throw new Error("this namespace was written by the first log layout; its migration is not built yet");
}

import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";

/**
 * PROFILE=file.cpuprofile: profiles this process from now until the returned function is
 * called, which writes the profile there. Without PROFILE both are no-ops, so a bench
 * brackets the phase it measures and nothing else.
 */
export async function profileIfAsked(): Promise<() => Promise<void>> {
  const file = process.env.PROFILE;
  if (!file) return async () => undefined;
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  return async () => {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "../support/service-process.js";
import { connectRedis, deleteKeys } from "../../infra/redis/connection.js";
import { memberGroup, type Group, type Member } from "../support/members.js";
import { foldAlone, LogStream, storedKeys } from "../support/log-stream.js";

/**
 * Three members of one namespace, each started as `npm start` starts it (a supervisor, a
 * background worker, an api process), with their own PORT and DATA_DIR. Writes go to all
 * three; one is killed with SIGKILL mid-stream and the others take its partitions over;
 * every acknowledged log is then applied once, the state each survivor answers is the same
 * text, and it is the state a process folding the patient's logs alone compiles.
 */

let g: Group;

beforeAll(async () => {
  ensureBuilt();
  // The default lease TTL (6 s): failover within 15 s is what an operator gets without tuning.
  g = await memberGroup(3);
  await Promise.all(g.members.map((m) => g.start(m)));
}, 240_000);

afterAll(async () => {
  await g?.drop();
}, 60_000);

/** Polls until every partition is worked by exactly one of `members`; resolves with the ms it took. */
async function partitionsCovered(members: readonly Member[], withinMs: number): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    const by = await g.partitions();
    const all = members.flatMap((m) => by.get(m.name) ?? []);
    if (all.length === 16 && new Set(all).size === 16) return Date.now() - t0;
    if (Date.now() - t0 > withinMs) {
      const leaseLines = g.members.flatMap((m) => (m.process?.lines ?? []).filter((l) => /lease/.test(String(l.msg))).slice(-12).map((l) => `${m.name} ${JSON.stringify(l)}`));
      throw new Error(`partitions not covered within ${withinMs} ms: ${JSON.stringify([...by])}\n${leaseLines.join("\n")}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("three members on one namespace", () => {
  it("spread the partitions, survive a SIGKILL of one, and apply every acknowledged log once", async () => {
    const [m1, m2, m3] = g.members as [Member, Member, Member];
    await partitionsCovered(g.members, 30_000);
    const by = await g.partitions();
    for (const m of g.members) expect(by.get(m.name)!.length, `${m.name} works some partitions`).toBeGreaterThan(0);

    const stream = new LogStream(g, 40);
    await stream.createPatients(m1);
    stream.start();
    await stream.until(600);
    const killedAt = Date.now();
    await g.kill(m2);
    const killMs = Date.now() - killedAt;
    await partitionsCovered([m1, m3], 15_000 - killMs);
    const tookMs = Date.now() - killedAt;
    expect(tookMs).toBeLessThan(15_000);
    await stream.until(stream.acknowledged + 600);
    await stream.stop();
    // Only the killed member's connections may have failed; nothing else was refused.
    expect(stream.refused).toEqual([]);

    const survivors = [m1, m3];
    const expected = stream.perPatient();
    for (const pid of stream.patients) {
      const texts: string[] = [];
      for (const m of survivors) {
        const events = await stream.appliedEvents(m, pid);
        const n = expected.get(pid) ?? 0;
        expect(events, `patient ${pid} on ${m.name}: each acknowledged log applied once`).toEqual({ rows: n, logs: n });
        texts.push(await stream.stateText(m, pid));
      }
      expect(texts[1], `patient ${pid}: both survivors answer the same state`).toBe(texts[0]);
    }
    // A single process folding the same logs, patient by patient, compiles the same modules.
    const alone = await foldAlone(g.ns, stream.patients);
    for (const pid of stream.patients) {
      const { alone: one, members } = alone.get(pid)!;
      expect(JSON.stringify(members), `patient ${pid}: the members' state is what one process folds`).toBe(JSON.stringify(one));
    }
    expect(await stream.queryCount(m3)).toBe(stream.acknowledged);

    // Redis loses some patients' states: a read through either survivor has the member
    // working each patient's partition rebuild it from the stream.
    const redis = await connectRedis("redis://127.0.0.1:6379");
    try {
      for (const pid of stream.patients.slice(0, 4)) await deleteKeys(redis, `${g.ns}:*{${pid}}`);
    } finally {
      await redis.quit();
    }
    for (const [i, pid] of stream.patients.slice(0, 4).entries()) {
      const n = stream.keysOf(pid).length;
      expect(await stream.appliedEvents(survivors[i % 2]!, pid), `patient ${pid} rebuilt`).toEqual({ rows: n, logs: n });
    }
    console.log(`failover: every partition worked again ${tookMs} ms after the SIGKILL (default lease TTL); ${stream.retried} batches sent again`);
  }, 240_000);

  it("lose nothing over a rolling restart of all three under writes (only retryable 503s)", async () => {
    for (const m of g.members) if (!m.process) await g.start(m);
    await partitionsCovered(g.members, 30_000);
    const stream = new LogStream(g, 200, 4, 20, 100);
    await stream.createPatients(g.members[0]!);
    stream.start();
    await stream.until(300);
    for (const m of g.members) {
      await g.stop(m);
      await stream.until(stream.acknowledged + 200);
      await g.start(m);
      await stream.until(stream.acknowledged + 200);
    }
    await stream.stop();
    expect(stream.refused).toEqual([]);
    await partitionsCovered(g.members, 30_000);
    const stored = await storedKeys(g.ns, stream.patients);
    for (const pid of stream.patients) {
      const acked = stream.keysOf(pid);
      const held = stored.get(pid)!;
      expect(held.filter((k) => acked.includes(k)).length, `patient ${pid}: every acknowledged log is in the stream, once`).toBe(acked.length);
      expect(new Set(held).size, `patient ${pid}: no log stored twice`).toBe(held.length);
      const n = held.length;
      expect(await stream.appliedEvents(g.members[1]!, pid), `patient ${pid}: each stored log applied once`).toEqual({ rows: n, logs: n });
    }
    const alone = await foldAlone(g.ns, stream.patients);
    for (const pid of stream.patients) {
      const { alone: one, members } = alone.get(pid)!;
      expect(JSON.stringify(members), pid).toBe(JSON.stringify(one));
    }
    // The first test's logs are in the namespace too: the count covers both streams of writes.
    expect(await stream.queryCount(g.members[2]!)).toBeGreaterThanOrEqual(stream.acknowledged);
  }, 300_000);
});

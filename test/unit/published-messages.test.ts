import { describe, expect, it } from "vitest";
import { PublishedMessages } from "../../infra/nats/published-messages.js";

const msg = (n: number) => ({ logs: [{ id: `log_${n}`, payload: { score: n, nested: { list: [n] } } }] });

describe("PublishedMessages", () => {
  it("hands each reader the published object once, then lets it go", () => {
    const p = new PublishedMessages<ReturnType<typeof msg>>(1_000);
    const engine = p.reader();
    const projector = p.reader();
    const m = msg(1);
    p.put(1, m, 10);
    expect(engine.take(1)).toBe(m);
    expect(engine.take(1)).toBeUndefined(); // a redelivery parses
    expect(p.size).toEqual({ messages: 1, bytes: 10 });
    expect(projector.take(1)).toBe(m);
    expect(p.size).toEqual({ messages: 0, bytes: 0 });
    expect(p.stats).toEqual({ handed: 2, missed: 1 });
  });

  it("drops what every reader has passed, and keeps what one still has ahead of it", () => {
    const p = new PublishedMessages<ReturnType<typeof msg>>(1_000);
    const engine = p.reader();
    const projector = p.reader();
    for (let s = 1; s <= 4; s++) p.put(s, msg(s), 10);
    // The engine skips 1 and 2 (say they were redelivered first) and reads 3.
    expect(engine.take(3)?.logs[0]!.id).toBe("log_3");
    expect(p.size.messages).toBe(4); // the projector has not passed any
    expect(projector.take(2)?.logs[0]!.id).toBe("log_2");
    // Both passed 1 and 2; 3 waits for the projector, 4 for both.
    expect(p.size.messages).toBe(2);
    expect(projector.take(3)?.logs[0]!.id).toBe("log_3");
    expect(p.size.messages).toBe(1);
  });

  it("keeps nothing that every reader already read (and parsed) before the publish was acknowledged", () => {
    const p = new PublishedMessages<ReturnType<typeof msg>>(1_000);
    const a = p.reader();
    const b = p.reader();
    expect(a.take(5)).toBeUndefined();
    expect(b.take(5)).toBeUndefined();
    p.put(5, msg(5), 10);
    expect(p.size.messages).toBe(0);
    // Read by one reader only: it waits for the other alone.
    expect(a.take(6)).toBeUndefined();
    p.put(6, msg(6), 10);
    expect(a.take(6)).toBeUndefined();
    expect(b.take(6)?.logs[0]!.id).toBe("log_6");
  });

  it("holds at most maxBytes of messages: the oldest go first, and their readers parse", () => {
    const p = new PublishedMessages<ReturnType<typeof msg>>(25);
    const r = p.reader();
    p.put(1, msg(1), 10);
    p.put(2, msg(2), 10);
    p.put(3, msg(3), 10);
    expect(p.size).toEqual({ messages: 2, bytes: 20 });
    expect(r.take(1)).toBeUndefined();
    expect(r.take(2)?.logs[0]!.id).toBe("log_2");
    p.put(4, msg(4), 30); // larger than the whole budget: never held
    expect(p.size.messages).toBe(1);
  });

  it("keeps nothing without readers", () => {
    const p = new PublishedMessages<ReturnType<typeof msg>>(1_000);
    p.put(1, msg(1), 10);
    expect(p.size.messages).toBe(0);
  });

  it("with freeze, makes a reader that writes into a handed-over log fail", () => {
    const p = new PublishedMessages<ReturnType<typeof msg>>(1_000, true);
    const r = p.reader();
    p.put(1, msg(1), 10);
    const m = r.take(1)!;
    expect(() => {
      (m.logs[0]!.payload.nested.list).push(2);
    }).toThrow(TypeError);
    expect(() => {
      (m.logs[0]!.payload as { score: number }).score = 9;
    }).toThrow(TypeError);
  });
});

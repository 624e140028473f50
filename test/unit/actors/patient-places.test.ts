import { describe, expect, it } from "vitest";
import { PatientPlaces } from "../../../actors/patient-places.js";

/** Actors as a set of patient ids; passivating one stops it at once, as xstate does. */
function harness(max: number) {
  const held = new Set<string>();
  const started: string[] = [];
  const places: PatientPlaces<{ patient_id: string }> = new PatientPlaces({
    max,
    held: () => held.size,
    start: ({ patient_id }) => {
      places.started(patient_id);
      held.add(patient_id);
      started.push(patient_id);
    },
    passivate: (pid) => stop(pid),
  });
  function stop(pid: string) {
    if (!held.delete(pid)) return;
    places.gone(pid);
    places.fill();
  }
  return { places, held, started, stop };
}
const input = (patient_id: string) => ({ patient_id });
const microtasks = () => new Promise<void>((r) => queueMicrotask(r));

describe("the engine's places in memory", () => {
  it("starts patients while places are free, then queues the rest first come first started", () => {
    const h = harness(2);
    for (const p of ["a", "b", "c", "d"]) h.places.wait(input(p));
    expect(h.started).toEqual(["a", "b"]);
    h.places.wait(input("c")); // already waiting: one place in the queue
    h.stop("b");
    expect(h.started).toEqual(["a", "b", "c"]);
    h.stop("a");
    expect(h.started).toEqual(["a", "b", "c", "d"]);
    expect(h.held.size).toBe(2);
  });

  it("gives an actor's place away as soon as it has nothing to apply while someone waits", async () => {
    const h = harness(1);
    h.places.wait(input("a"));
    h.places.wait(input("b"));
    h.places.update("a", false, () => h.stop("a")); // still applying: keeps its place
    await microtasks();
    expect(h.started).toEqual(["a"]);
    h.places.update("a", true, () => h.stop("a"));
    await microtasks();
    expect(h.started).toEqual(["a", "b"]);
  });

  it("keeps idle actors while nobody waits, and evicts the longest idle when a new patient comes", () => {
    const h = harness(2);
    h.places.wait(input("a"));
    h.places.wait(input("b"));
    h.places.update("a", true, () => h.stop("a"));
    h.places.update("b", true, () => h.stop("b"));
    expect(h.held).toEqual(new Set(["a", "b"]));
    h.places.wait(input("c"));
    expect(h.held).toEqual(new Set(["b", "c"]));
  });

  it("lets a busy engine's newcomers wait rather than exceed its limit", () => {
    const h = harness(2);
    for (const p of ["a", "b", "c"]) h.places.wait(input(p));
    expect(h.held.size).toBe(2);
    expect(h.started).toEqual(["a", "b"]);
  });

  it("takes the waiting patients of a partition that went out of the queue", () => {
    const h = harness(1);
    for (const p of ["a", "x1", "b", "x2"]) h.places.wait(input(p));
    expect(h.places.drop((pid) => pid.startsWith("x"))).toEqual(["x1", "x2"]);
    h.stop("a");
    h.stop("b");
    expect(h.started).toEqual(["a", "b"]);
  });
});

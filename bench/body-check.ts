/**
 * The write path's check of a JSON body's text before it is parsed (readTextShape: depth,
 * members, numbers that may read as infinity) against JSON.parse of the same text, on a
 * 10,000-log batch body (about 3 MB). Prints the best of each round in milliseconds and
 * the scan's share of the parse: the check is meant to stay well under the parse.
 *
 *   npm run build:bench && node dist/bench/body-check.js [ROUNDS]
 */
import { readTextShape } from "../catalog/json-shape.js";

const rounds = Number(process.argv[2] ?? 5);
const log = (i: number) => ({
  log_type: "symptom_report", patient_id: "pat_01JX0000000000000000000000", timestamp: "2026-01-01T10:00:00.123Z", idempotency_key: `k-${i}-1732770000000`,
  payload: { symptoms: [{ symptom: "pain", score: 7, notes: 'worse after walking, "sharp" at night \\ [x]' }, { symptom: "fatigue", score: 4 }], heart_rate: 72.5 },
  metadata: { source: "app", v: 3 },
});
const text = JSON.stringify({ logs: Array.from({ length: 10_000 }, (_, i) => log(i)) });

const best = (f: () => void, n = 7) => Math.min(...Array.from({ length: n }, () => {
  const at = performance.now();
  f();
  return performance.now() - at;
}));

const limits = { depth: 128, members: 10_000 };
// Warmed first: the scan is JavaScript, tiered up by the JIT; JSON.parse is native.
for (let i = 0; i < 20; i++) readTextShape(text, limits);
const out = [];
for (let r = 0; r < rounds; r++) {
  const scan = best(() => readTextShape(text, limits));
  const parse = best(() => JSON.parse(text));
  out.push({ scan_ms: +scan.toFixed(2), parse_ms: +parse.toFixed(2), share: +(scan / parse).toFixed(2) });
}
console.log(JSON.stringify({ bytes: text.length, rounds: out }, null, 2));

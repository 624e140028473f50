/**
 * The idempotency ledger's messages: what a claim is, and the text each group commit
 * publishes on its shard's subject, read back to rebuild the index.
 */

/** Who holds an idempotency key: the log first stored with it. */
export interface Claim {
  log_id: string;
  patient_id: string;
  /** Epoch ms: tells a claim still in flight from one a crash left behind. */
  claimed_at: number;
}

export type ClaimResult = { won: true } | { won: false; existing: Claim };

/** One step of a ledger message: a claim (`c`) or a release (`r`) of a key. */
export type LedgerEntry = { op: "c"; key: string; claim: Claim } | { op: "r"; key: string; logId: string };

/**
 * Claims, then releases, as JSON: the ledger's first message format. Its stream keeps
 * every message for good (keys deduplicate forever), so its subjects may hold some.
 */
interface JsonLedgerMessage {
  c?: { k: string; l: string; p: string; t: number }[];
  r?: { k: string; l: string }[];
}

/**
 * A ledger message is text, one line per step of the group commit, in the order decided:
 * `c <key> <log_id> <patient_id> <claimed_at>` or `r <key> <log_id>`. The part after the
 * key of a claim is the index value (encodeClaim), built once for both. Ids and keys
 * hold no spaces. Messages of the first format (JsonLedgerMessage) decode too.
 * A step the writer could not have written (a message some other NATS client published
 * on the subject) is left out, so a shard's readers never fail on it and its writes go on.
 */
export function decodeLedger(data: Uint8Array | string): LedgerEntry[] {
  const text = typeof data === "string" ? data : textDecoder.decode(data);
  if (text.startsWith("{")) return decodeJsonLedger(text);
  const out: LedgerEntry[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("c ")) {
      const at = line.indexOf(" ", 2);
      const claim = at > 2 ? decodeClaim(line.slice(at + 1)) : null;
      if (claim && isClaim(claim)) out.push({ op: "c", key: line.slice(2, at), claim });
    } else if (line.startsWith("r ")) {
      const [, key, logId, extra] = line.split(" ");
      if (key && logId && extra === undefined) out.push({ op: "r", key, logId });
    }
  }
  return out;
}

const isText = (v: unknown): v is string => typeof v === "string" && v !== "" && !v.includes(" ");
const isClaim = (c: Claim) => isText(c.log_id) && isText(c.patient_id) && Number.isFinite(c.claimed_at);

function decodeJsonLedger(text: string): LedgerEntry[] {
  let msg: JsonLedgerMessage;
  try {
    msg = JSON.parse(text) as JsonLedgerMessage;
  } catch {
    return [];
  }
  const list = <T>(v: T[] | undefined): unknown[] => (Array.isArray(v) ? v : []);
  const out: LedgerEntry[] = [];
  for (const c of list(msg?.c) as Partial<{ k: unknown; l: unknown; p: unknown; t: unknown }>[]) {
    const claim = { log_id: c?.l, patient_id: c?.p, claimed_at: c?.t } as Claim;
    if (isText(c?.k) && isClaim(claim)) out.push({ op: "c", key: c.k, claim });
  }
  for (const r of list(msg?.r) as Partial<{ k: unknown; l: unknown }>[]) if (isText(r?.k) && isText(r?.l)) out.push({ op: "r", key: r.k, logId: r.l });
  return out;
}

/** Folds a ledger message into key → claim, step by step: the rules the writer applied under CAS. */
export function applyLedger(state: Map<string, Claim>, entries: readonly LedgerEntry[]): void {
  for (const e of entries) {
    if (e.op === "c") state.set(e.key, e.claim);
    else if (state.get(e.key)?.log_id === e.logId) state.delete(e.key);
  }
}

const textDecoder = new TextDecoder();

/** Index values are "log_id patient_id claimed_at": ids hold no spaces, and this is far cheaper than JSON. */
export const encodeClaim = (c: Claim) => `${c.log_id} ${c.patient_id} ${c.claimed_at}`;
export function decodeClaim(v: string): Claim {
  const [log_id, patient_id, t] = v.split(" ");
  return { log_id: log_id!, patient_id: patient_id!, claimed_at: Number(t) };
}

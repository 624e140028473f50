import { viewTitle, windowText, type View, type ViewBlock } from "../../../readmodels/views/index.js";
import { MAX_RESULT_BYTES } from "../budget.js";

/** A block as the REST twin answers it. */
export const blockOut = (b: ViewBlock) => ({ id: b.id, name: b.name, text: b.text, segment: b.segment, refs: b.refs, data: b.data });

/** The REST twin's raw view answer (GET /v1/state/{pid}/views/{type}?format=raw). */
export const rawView = (patientId: string, v: View) => ({
  patient_id: patientId,
  view_type: v.view_type,
  view_id: v.view_id,
  valid_from: v.valid_from,
  valid_to: v.valid_to,
  window: v.window,
  content: { blocks: v.blocks.map(blockOut), temp: v.temp.map(blockOut) },
});

/** Log ids shown under a block in markdown; get_view_block returns them all. */
const REFS_SHOWN = 25;

function sources(b: ViewBlock): string {
  if (b.refs.length === 0) return "";
  const shown = b.refs.slice(0, REFS_SHOWN).join(", ");
  const more = b.refs.length > REFS_SHOWN ? ` and ${b.refs.length - REFS_SHOWN} more (get_view_block lists all)` : "";
  return `\n\n_Sources: ${shown}${more}_`;
}

/** A block's text kept to its first lines within `chars` characters, saying how many lines were left and where they are. */
function firstLines(b: ViewBlock, chars: number): string {
  if (b.text.length <= chars) return b.text;
  const lines = b.text.split("\n");
  let kept = 0;
  for (let used = 0; kept < lines.length && used + lines[kept]!.length + 1 <= chars; kept++) used += lines[kept]!.length + 1;
  kept = Math.max(1, kept);
  const first = lines.slice(0, kept).map((l) => (l.length > chars ? `${l.slice(0, chars)}…` : l));
  return `${first.join("\n")}\n- _… ${lines.length - kept} more lines: get_view_block ${b.id}_`;
}

/** The past time a view was read at (as_of, known_at), when it was. */
export interface ReadAt {
  as_of?: string | null;
  known_at?: string | null;
}

function render(v: View, chars: number, at: ReadAt): string {
  const text = (b: ViewBlock) => firstLines(b, chars) + sources(b);
  const out = [`# ${viewTitle(v.view_type)}`, "", `_As of ${v.valid_from ?? "no data yet"} · week: ${windowText(v.window)} · ${v.view_id}_`];
  if (at.as_of !== undefined || at.known_at !== undefined) out.push("", `_The state at a past time: as_of ${at.as_of ?? "(now)"}, known_at ${at.known_at ?? "(now)"}_`);
  for (const b of v.blocks) out.push("", `## ${b.name} (block ${b.id})`, "", text(b));
  if (v.temp.length > 0) {
    out.push("", "## To follow up");
    for (const b of v.temp) out.push("", `### ${b.name} (block ${b.id})`, "", text(b));
  }
  if (v.blocks.length === 0 && v.temp.length === 0) out.push("", "_Nothing recorded yet._");
  return `${out.join("\n")}\n`;
}

/**
 * The view as markdown for a model. Unlike the REST twin's document, each block ends
 * with the ids of the logs it came from, so a model can cite them. Over the size budget,
 * every block keeps its heading and first lines (the longest blocks are shortened, to one
 * length for all, never dropped) and says how many lines are left and which block to read.
 */
export function markdownView(v: View, at: ReadAt = {}): string {
  const whole = render(v, Infinity, at);
  if (Buffer.byteLength(whole) <= MAX_RESULT_BYTES) return whole;
  // The longest per-block text that fits, by bisection (a margin for multi-byte text).
  const fits = (chars: number) => Buffer.byteLength(render(v, chars, at)) <= MAX_RESULT_BYTES - 200;
  let lo = 200;
  let hi = Math.max(...[...v.blocks, ...v.temp].map((b) => b.text.length));
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return `${render(v, lo, at)}\n_[The view is over 20 kB: the longest blocks show their first lines; get_view_block reads one whole.]_\n`;
}

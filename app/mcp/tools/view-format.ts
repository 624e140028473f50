import { viewTitle, type View, type ViewBlock } from "../../../readmodels/views/index.js";
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

/**
 * The view as markdown for a model. Unlike the REST twin's document, each block ends
 * with the ids of the logs it came from, so a model can cite them. Cut at the size
 * budget with a note saying how to read the rest.
 */
export function markdownView(v: View, at: { as_of?: string | null; known_at?: string | null } = {}): string {
  const out = [`# ${viewTitle(v.view_type)}`, "", `_As of ${v.valid_from ?? "no data yet"} · ${v.view_id}_`];
  if (at.as_of !== undefined || at.known_at !== undefined) out.push("", `_The state at a past time: as_of ${at.as_of ?? "(now)"}, known_at ${at.known_at ?? "(now)"}_`);
  for (const b of v.blocks) out.push("", `## ${b.name} (block ${b.id})`, "", b.text + sources(b));
  if (v.temp.length > 0) {
    out.push("", "## To follow up");
    for (const b of v.temp) out.push("", `### ${b.name} (block ${b.id})`, "", b.text + sources(b));
  }
  if (v.blocks.length === 0 && v.temp.length === 0) out.push("", "_Nothing recorded yet._");
  const text = `${out.join("\n")}\n`;
  if (Buffer.byteLength(text) <= MAX_RESULT_BYTES) return text;
  // Cut by characters at a safe margin below the byte budget (multi-byte text is rare here).
  const cut = text.slice(0, Math.floor(MAX_RESULT_BYTES * 0.8));
  return `${cut.slice(0, cut.lastIndexOf("\n"))}\n\n_[truncated: the view is over 20 kB; read the remaining blocks one at a time with get_view_block]_\n`;
}

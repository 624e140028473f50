import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { View } from "../../../readmodels/views/index.js";
import { patientIdArg, type McpContext } from "../context.js";
import { markdownView } from "../tools/view-format.js";
import { promptPatient, resolvePrompt, userMessage } from "./shared.js";

/** Room for the views in the prompt (bytes): enough for every view of a busy patient in a few thousand tokens. */
const MATERIAL_BYTES = 40_000;

/** A view's markdown cut to its share of the budget, at a line boundary. */
function fit(v: View, share: number): string {
  const md = markdownView(v);
  if (Buffer.byteLength(md) <= share) return md;
  const cut = md.slice(0, Math.floor(share * 0.9));
  return `${cut.slice(0, cut.lastIndexOf("\n"))}\n_[cut for length: get_view ${v.view_type} has the rest]_\n`;
}

export function registerVisitPrepSummary(server: McpServer, ctx: McpContext): void {
  server.registerPrompt(
    "visit_prep_summary",
    {
      title: "Visit prep summary",
      description: "A concise pre-visit summary for a clinician, resolved from every view of the patient's current state (profile, symptoms, medications, labs, vitals, devices, questionnaires, engagement), citing log ids.",
      argsSchema: { patient_id: patientIdArg(ctx.principal) },
    },
    ({ patient_id }, extra) => resolvePrompt(ctx, extra.requestId, async () => {
      const pid = promptPatient(ctx, patient_id);
      const reader = ctx.services.stateReader;
      const snap = await reader.snapshot(ctx.principal, pid);
      const views = (await reader.allViews(snap.stored)).filter((v) => v.blocks.length > 0 || v.temp.length > 0);
      if (views.length === 0) {
        return userMessage("No data yet", `Patient ${pid} has no recorded data yet. Say that there is nothing to summarize before the visit.`);
      }
      const share = Math.floor(MATERIAL_BYTES / views.length);
      return userMessage(`Visit prep from ${views.length} views`, [
        `Prepare a visit summary for the clinician seeing patient ${pid}, from the views below.`,
        "Structure: 1) who the patient is, the main condition and treatment, and the last encounter's assessment and plan",
        "(the 'Last encounter' block); 2) what changed since then and in the last week",
        "(symptoms, doses, labs, vitals); 3) open items to raise at the visit (the 'To follow up' sections); 4) questions",
        "to ask. At most 250 words, facts only, and cite the log ids of each fact in square brackets from the",
        "'Sources' lines.",
        "",
        ...views.map((v) => fit(v, share)),
      ].join("\n"));
    }),
  );
}

import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { Services } from "../../../services.js";
import type { Horizon } from "../../../../readmodels/as-of.js";
import { diffStates } from "../../../../readmodels/state-diff.js";
import { assertKnowable } from "../../../../src/state/as-of-read.js";
import { AppError, fieldIssue } from "../../../../src/errors.js";
import { responses } from "../../schemas.js";
import { markFreshness } from "./index.js";
import { instantParam, PatientParams, StateDiffSchema } from "./schemas.js";
import { QueryParams } from "../../query-params.js";

/** GET /v1/state/{pid}/diff: the changed modules and fields between two states folded from the log. */
export const stateDiffRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  app.get(
    "/v1/state/:pid/diff",
    {
      config: { scope: "sdk:state-read" as const },
      schema: {
        summary: "What changed between the state at `from` and at `to` (as_of, or known_at with basis=known): modules and top-level payload fields",
        tags: ["state"],
        params: PatientParams,
        querystring: QueryParams({
          from: Type.String({ description: "The earlier instant: an ISO 8601 datetime with an offset, or a date (UTC midnight)" }),
          to: Type.Optional(Type.String({ description: "The later instant, in the same forms; default now" })),
          basis: Type.Union([Type.Literal("event"), Type.Literal("known")], {
            default: "event",
            description: "event: each state holds the logs with event time at or before the instant (as_of); known: the logs accepted by then (known_at)",
          }),
        }),
        response: responses({ 200: StateDiffSchema }),
      },
    },
    async (req, reply) => {
      const now = new Date().toISOString();
      const from = instantParam(req.query.from, "from")!;
      const to = instantParam(req.query.to, "to") ?? now;
      const basis = req.query.basis;
      if (from > to) {
        const message = `from ${from} is after to ${to}: from is the earlier state; swap them`;
        throw new AppError("validation", message, [fieldIssue(["query", "from"], message, req.query.from)]);
      }
      const at = (t: string): Horizon => (basis === "event" ? { as_of: t } : { known_at: t });
      if (basis === "known") assertKnowable(at(to), now, ["query"], "to");
      const [before, after] = await s.horizonReader.snapshots(req.principal, req.params.pid, [at(from), at(to)]);
      // The headers of the later state's read; its horizon is in the body (from, to).
      markFreshness(reply, { stored: after!.stored, current: true });
      const modules = diffStates(before!.stored.state, after!.stored.state);
      const summarized = modules.reduce((n, m) => n + m.fields.filter((f) => f.summary !== null).length, 0);
      return { patient_id: req.params.pid, basis, from, to, summarized, modules };
    },
  );
};

import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { MemberObserver } from "../../observe.js";

const Status = Type.Object({ status: Type.Union([Type.Literal("up"), Type.Literal("down")]), error: Type.Optional(Type.String()) });

/** A process of the member: members of a namespace, and the processes of one, are told apart by it. */
const Instance = Type.Object({
  id: Type.String({ description: "Stable for the life of the process: host, pid and a random part" }),
  role: Type.Union([Type.Literal("all"), Type.Literal("api"), Type.Literal("worker")], { description: "What the process does (PSS_ROLE; an api process of PSS_ROLE=all says api)" }),
  pid: Type.Integer(),
  partitions: Type.Array(Type.Integer({ minimum: 0 }), { description: "Partitions of the log stream the process applies, ascending (empty: none, or not partitioned)" }),
  leases: Type.Array(
    Type.Object({
      resource: Type.String({ description: "What the lease is for, e.g. p.3 (a partition) or projector" }),
      epoch: Type.Integer({ description: "The lease's fencing token: higher for each later acquisition of the resource" }),
      since: Type.String({ format: "date-time", description: "When the process acquired it" }),
    }),
    { description: "Leases the process holds" },
  ),
  reported_at: Type.String({ format: "date-time", description: "When the process said what it works: now for the process that answered; a sibling says so when it changes and every second, and one silent for over 3 s is left out" }),
});
const Health = Type.Object({
  status: Type.Union([Type.Literal("ok"), Type.Literal("degraded"), Type.Literal("unavailable")], {
    description: "ok: every backend answers; degraded (503, as any backend down): serving without a backend it can do without (an api process without ClickHouse: writes and state reads go on, log queries are 503); unavailable (503): not serving",
  }),
  down: Type.Array(Type.Union([Type.Literal("nats"), Type.Literal("redis"), Type.Literal("clickhouse")]), { description: "The backends that did not answer within 2 s" }),
  nats: Status,
  redis: Status,
  clickhouse: Status,
  instance: Instance,
  processes: Type.Array(Instance, { description: "Every process of this member: the one that answered first, then, under a supervisor, what the worker and the other api processes last said (see reported_at)" }),
});

export const healthRoutes: FastifyPluginAsyncTypebox<{ observer: MemberObserver }> = async (app, { observer }) => {
  app.get(
    "/healthz",
    {
      config: { scope: false },
      schema: {
        summary: "Whether this process serves, each backend's status, and what the member's processes hold (no auth)",
        tags: ["health"],
        response: {
          200: Health,
          503: Health,
        },
      },
    },
    async (_req, reply) => {
      const { statusCode, body } = await observer.health();
      return reply.status(statusCode).send(body);
    },
  );
};

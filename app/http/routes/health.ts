import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { Services } from "../../services.js";

const Status = Type.Object({ status: Type.Union([Type.Literal("up"), Type.Literal("down")]), error: Type.Optional(Type.String()) });

/** The process that answered: members of a namespace are told apart by it. */
const Instance = Type.Object({
  id: Type.String({ description: "Stable for the life of the process: host, pid and a random part" }),
  role: Type.Union([Type.Literal("all"), Type.Literal("api"), Type.Literal("worker")], { description: "What the process does (PSS_ROLE; an api process of PSS_ROLE=all says api)" }),
  pid: Type.Integer(),
});
const Health = Type.Object({ status: Type.String(), nats: Status, redis: Status, clickhouse: Status, instance: Instance });

async function probe(check: () => Promise<unknown>): Promise<{ status: "up" | "down"; error?: string }> {
  try {
    await Promise.race([check(), new Promise((_, reject) => setTimeout(() => reject(new Error("no answer within 2 s")), 2_000).unref())]);
    return { status: "up" };
  } catch (err) {
    return { status: "down", error: (err as Error).message };
  }
}

export const healthRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  app.get(
    "/healthz",
    {
      config: { scope: false },
      schema: {
        summary: "Liveness and backend status (no auth)",
        tags: ["health"],
        response: {
          200: Health,
          503: Health,
        },
      },
    },
    async (_req, reply) => {
      const [nats, redis, clickhouse] = await Promise.all([
        probe(() => s.nc.rtt()),
        probe(() => s.redis.ping()),
        probe(() => s.clickhouse.ping()),
      ]);
      const ok = nats.status === "up" && redis.status === "up" && clickhouse.status === "up";
      return reply.status(ok ? 200 : 503).send({ status: ok ? "ok" : "degraded", nats, redis, clickhouse, instance: s.instance });
    },
  );
};

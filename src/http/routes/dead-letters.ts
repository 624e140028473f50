import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { readSubject } from "../../../infra/nats/log-history.js";
import type { DeadLetter } from "../../../actors/device-feed.js";
import type { Services } from "../../services.js";
import { responses } from "../schemas.js";

export const deadLetterRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  app.get(
    "/v1/dead-letters",
    {
      config: { scope: "sdk:event-log" },
      schema: {
        summary: "Device-feed messages of this project that could not be accepted, with their errors (oldest first)",
        tags: ["logs"],
        querystring: Type.Object({
          limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
          cursor: Type.Optional(Type.String({ pattern: "^\\d+$", description: "next_cursor of the previous page" })),
        }),
        response: responses({
          200: Type.Object({
            count: Type.Integer(),
            dead_letters: Type.Array(
              Type.Object({
                id: Type.String(),
                received_at: Type.String(),
                subject: Type.String(),
                reason: Type.String(),
                errors: Type.Array(Type.Object({ index: Type.Integer(), code: Type.String(), message: Type.String(), details: Type.Array(Type.Unknown()) })),
                message: Type.Unknown(),
              }),
            ),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
          }),
        }),
      },
    },
    async (req) => {
      const { organization_id, project_id } = req.principal;
      const { js, jsm, names } = s.topology;
      const from = req.query.cursor ? Number(req.query.cursor) + 1 : undefined;
      const out: (DeadLetter & { id: string })[] = [];
      let more = false;
      for await (const m of readSubject<DeadLetter>(js, jsm, names.deadLetterStream, names.deadLetterSubject(organization_id, project_id), { fromSeq: from })) {
        if (out.length === req.query.limit) {
          more = true;
          break;
        }
        out.push({ id: String(m.seq), ...m.data });
      }
      return { count: out.length, dead_letters: out, next_cursor: more ? out.at(-1)!.id : null };
    },
  );
};

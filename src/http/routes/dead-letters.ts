import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { readSubject } from "../../../infra/nats/log-history.js";
import type { DeadLetter } from "../../../actors/device-feed.js";
import { AppError } from "../../errors.js";
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
                message: Type.Unknown({ description: "The message as received; when the letter was cut to 512 KB, {bytes, head} (its first 64 K characters)" }),
                errors_total: Type.Optional(Type.Integer({ description: "Set when the letter was cut: the number of errors, of which the first 100 are listed without details" })),
                truncated: Type.Optional(Type.Boolean()),
              }),
            ),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
          }),
        }),
      },
    },
    async (req) => {
      const { organization_id, project_id } = req.principal;
      // Dead letters are the project's (any patient's payloads): a patient token, which may
      // write its patient's logs (sdk:event-log), must not read them.
      if (req.principal.patient_id !== undefined) {
        throw new AppError("authorization", "a patient token cannot read the project's dead letters: use an API key or a JWT with sdk:event-log");
      }
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

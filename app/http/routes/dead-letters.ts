import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type, type Static } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { JsMsg } from "@nats-io/jetstream";
import { readSubject } from "../../../infra/nats/log-history.js";
import { AppError } from "../../../src/errors.js";
import { textNestsDeeperThan } from "../../../catalog/json-shape.js";
import type { Services } from "../../services.js";
import { responses } from "../schemas.js";
import { QueryParams } from "../query-params.js";

const LetterSchema = Type.Object({
  received_at: Type.String(),
  subject: Type.String(),
  reason: Type.String({ description: "invalid_json, project_not_found, invalid_logs, invalid_subject, unprocessable (device feed); not_queryable (a stored log the log query cannot hold: the ClickHouse projector set it aside); unreadable_log_message (a log-stream message the service did not write); unreadable_letter (a letter the service did not write)" }),
  errors: Type.Array(Type.Object({ index: Type.Integer(), code: Type.String(), message: Type.String(), details: Type.Array(Type.Unknown()) })),
  message: Type.Unknown({ description: "The message as received; when the letter was cut to 512 KB, {bytes, head} (its first 64 K characters)" }),
  errors_total: Type.Optional(Type.Integer({ description: "Set when the letter was cut: the number of errors, of which the first 100 are listed without details" })),
  truncated: Type.Optional(Type.Boolean()),
});
type Letter = Static<typeof LetterSchema>;
const isLetter = TypeCompiler.Compile(LetterSchema);

/** Deepest letter listed as stored: deeper ones would overflow the answer's serializer, and are listed as text. */
const MAX_LETTER_DEPTH = 1_000;
/** What is kept of an unreadable letter's text. */
const UNREADABLE_HEAD_CHARS = 64 * 1024;
const textDecoder = new TextDecoder();

/**
 * A stored letter, or, for one that cannot be listed as stored (anything another NATS
 * client published onto the dead-letter subject, or nesting too deep to serialize), a
 * letter saying why with the first 64 K characters of its text: listed, never a failed page.
 */
function readLetter(data: Uint8Array, m: JsMsg): Letter {
  const text = textDecoder.decode(data);
  let why = `it nests deeper than ${MAX_LETTER_DEPTH} levels`;
  if (!textNestsDeeperThan(text, MAX_LETTER_DEPTH)) {
    try {
      const body: unknown = JSON.parse(text);
      if (isLetter.Check(body)) return body;
      why = "it is not of the form the service writes letters in (another NATS client wrote it)";
    } catch {
      why = "it is not JSON";
    }
  }
  return {
    received_at: m.timestamp,
    subject: m.subject,
    reason: "unreadable_letter",
    errors: [{ index: 0, code: "unreadable_letter", message: `this letter cannot be listed as stored: ${why}; its text follows`, details: [] }],
    message: text.slice(0, UNREADABLE_HEAD_CHARS),
  };
}

export const deadLetterRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  app.get(
    "/v1/dead-letters",
    {
      config: { scope: "sdk:event-log" },
      schema: {
        summary: "Device-feed messages of this project that could not be accepted, and its stored logs the log query cannot hold, with their errors (oldest first)",
        tags: ["logs"],
        querystring: QueryParams({
          limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
          cursor: Type.Optional(Type.String({ pattern: "^\\d+$", description: "next_cursor of the previous page" })),
        }),
        response: responses({
          200: Type.Object({
            count: Type.Integer(),
            dead_letters: Type.Array(Type.Object({ id: Type.String(), ...LetterSchema.properties })),
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
      const out: (Letter & { id: string })[] = [];
      let more = false;
      for await (const m of readSubject(js, jsm, names.deadLetterStream, names.deadLetterSubject(organization_id, project_id), { fromSeq: from, decode: readLetter })) {
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

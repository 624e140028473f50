import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { AppError } from "../../../../src/errors.js";
import type { Services } from "../../../services.js";
import { assertViewType } from "../../../../src/state/state-reader.js";
import { horizonFields, horizonTime } from "../../../../src/state/as-of-read.js";
import type { Principal } from "../../../../src/auth/scopes.js";
import { recentLine, renderMarkdown, VIEW_INPUTS, type ViewBlock } from "../../../../readmodels/views/index.js";
import { blockListing, hasResult, TEMPLATE_BLOCKS, viewBlock } from "../../../../readmodels/views/template-blocks.js";
import { Nullable, responses } from "../../schemas.js";
import { markFreshness } from "./index.js";
import { ViewBlockAnswer, ViewBlocks, viewAnswer, ViewList } from "./answers.js";
import { BlockSchema, HorizonAnswer, HorizonQuery, horizonParam, instantParam, PatientParams, RecentItemSchema } from "./schemas.js";
import { RECENT_CURSOR_MAX, recentPage } from "../../../../src/state/recent-page.js";
import { QueryParams } from "../../query-params.js";

const ViewParams = Type.Object({ pid: PatientParams.properties.pid, view_type: Type.String() });

/**
 * A block as the raw view read answers it: ours, plus the template block it fills and its
 * result again (`template_ref`, `result`), where the hosted product's clients read them.
 * Only here: MCP's get_view answers blocks without the copies, to keep a model's context small.
 */
const blockOut = (b: ViewBlock) => ({
  id: b.id,
  name: b.name,
  text: b.text,
  segment: b.segment,
  refs: b.refs,
  data: b.data,
  template_ref: { block_id: b.id },
  result: { id: b.id, name: b.name, content: b.text },
});

/** Views: generated snapshots per template, as JSON blocks or one markdown document. */
export const stateViewRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  const config = { scope: "sdk:state-read" as const };
  const tags = ["state"];
  const reader = s.stateReader;
  const horizon = s.horizonReader;
  /** One view, at the query's horizon when it names one. */
  const viewRead = (principal: Principal, pid: string, viewType: string, q: { as_of?: string; known_at?: string }) => horizon.view(principal, pid, viewType, horizonParam(q));

  app.get(
    "/v1/state/:pid/views",
    {
      config,
      schema: {
        summary: "Every view type of the patient, with whether it has blocks and temporary items",
        tags,
        params: PatientParams,
        querystring: QueryParams(HorizonQuery),
        response: responses({ 200: ViewList }),
      },
    },
    async (req, reply) => {
      const { snap, views } = await horizon.allViews(req.principal, req.params.pid, horizonParam(req.query));
      markFreshness(reply, snap);
      return {
        patient_id: req.params.pid,
        ...horizonFields(snap),
        views: views.map((v) => ({ view_type: v.view_type, view_id: v.view_id, has_blocks: v.blocks.length > 0, has_temp: v.temp.length > 0 })),
      };
    },
  );

  app.get(
    "/v1/state/:pid/views/:view_type",
    {
      config,
      schema: {
        summary: "One view: raw JSON blocks, or format=markdown for a text/markdown document",
        tags,
        params: ViewParams,
        querystring: QueryParams({ format: Type.Union([Type.Literal("raw"), Type.Literal("markdown")], { default: "raw" }), ...HorizonQuery }),
        response: responses({ 200: viewAnswer(BlockSchema) }),
      },
    },
    async (req, reply) => {
      const { snap, view: v } = await viewRead(req.principal, req.params.pid, req.params.view_type, req.query);
      markFreshness(reply, snap);
      if (req.query.format === "markdown") {
        return reply.type("text/markdown; charset=utf-8").serializer((x: unknown) => x as string).send(renderMarkdown(v) as never);
      }
      return {
        patient_id: req.params.pid,
        ...horizonFields(snap),
        view_type: v.view_type,
        view_id: v.view_id,
        valid_from: v.valid_from,
        valid_to: v.valid_to,
        window: v.window,
        content: { blocks: v.blocks.map(blockOut), temp: v.temp.map(blockOut) },
      };
    },
  );

  app.get(
    "/v1/state/:pid/views/:view_type/blocks",
    {
      config,
      schema: {
        summary: "The blocks of one view",
        tags,
        params: ViewParams,
        querystring: QueryParams(HorizonQuery),
        response: responses({ 200: ViewBlocks }),
      },
    },
    async (req, reply) => {
      const { snap, view: v } = await viewRead(req.principal, req.params.pid, req.params.view_type, req.query);
      markFreshness(reply, snap);
      return {
        patient_id: req.params.pid,
        ...horizonFields(snap),
        view_type: v.view_type,
        blocks: blockListing(v),
      };
    },
  );

  app.get(
    "/v1/state/:pid/views/:view_type/blocks/:block_id",
    {
      config,
      schema: {
        summary: "One block of a view, with the ids of the logs behind it",
        tags,
        params: Type.Object({ pid: PatientParams.properties.pid, view_type: Type.String(), block_id: Type.String() }),
        querystring: QueryParams(HorizonQuery),
        response: responses({ 200: ViewBlockAnswer }),
      },
    },
    async (req, reply) => {
      const { snap, view: v } = await viewRead(req.principal, req.params.pid, req.params.view_type, req.query);
      markFreshness(reply, snap);
      const b = viewBlock(v, req.params.block_id);
      if (!b) {
        throw new AppError("not_found", `view ${v.view_type} has no block "${req.params.block_id}"; its blocks: ${TEMPLATE_BLOCKS[v.view_type].map((x) => x.id).join(", ")}`);
      }
      return {
        patient_id: req.params.pid,
        ...horizonFields(snap),
        view_type: v.view_type,
        block_id: b.id,
        block_name: b.name,
        segment: b.segment,
        content: b.text,
        data: b.data,
        refs: b.refs,
        has_result: hasResult(b),
        updated_at: v.valid_from,
      };
    },
  );

  app.get(
    "/v1/state/:pid/views/:view_type/recent",
    {
      config,
      schema: {
        summary: "The recent dated entries behind a view, newest first, from a time and with a cursor",
        tags,
        params: ViewParams,
        querystring: QueryParams({
          limit: Type.Integer({ minimum: 1, maximum: 200, default: 20 }),
          since: Type.Optional(Type.String({ description: "Only entries with an event time at or after this instant: an ISO 8601 datetime with an offset, or a date (UTC midnight)" })),
          cursor: Type.Optional(Type.String({ maxLength: RECENT_CURSOR_MAX, description: "next_cursor of the previous page; leave out for the newest entries" })),
          ...HorizonQuery,
        }),
        response: responses({
          200: Type.Object({
            patient_id: Type.String(),
            ...HorizonAnswer,
            view_type: Type.String(),
            entries: Type.Array(Type.String(), {
              description: "Each item as one line, its time in the patient's time zone: 2026-11-21 09:00 — symptom_report: pain 7/10 (esas_r)",
            }),
            items: Type.Array(RecentItemSchema, { description: "The same entries as objects, in the same order (entries[i] is items[i])" }),
            count: Type.Integer(),
            total_count: Type.Integer({ description: "Entries behind the view in all (those at or after since, when given), across every page" }),
            next_cursor: Nullable(Type.String({ description: "Pass as cursor for the entries after this page (older, or of the same time and a lower log id); null: none" })),
          }),
        }),
      },
    },
    async (req, reply) => {
      const type = req.params.view_type;
      assertViewType(type);
      const h = horizonParam(req.query);
      const snap = await horizon.orPlain(req.principal, req.params.pid, h, () => reader.snapshot(req.principal, req.params.pid, VIEW_INPUTS[type]));
      markFreshness(reply, snap);
      const q = { limit: req.query.limit, since: instantParam(req.query.since, "since"), cursor: req.query.cursor };
      const r = recentPage(type, snap.stored.state, horizonTime(h, reader.now()), q, ["query", "cursor"]);
      const tz = snap.stored.state.timezone;
      return {
        patient_id: req.params.pid,
        ...horizonFields(snap),
        view_type: req.params.view_type,
        entries: r.entries.map((e) => recentLine(e, tz)),
        items: r.entries,
        count: r.entries.length,
        total_count: r.total_count,
        next_cursor: r.next_cursor,
      };
    },
  );
};

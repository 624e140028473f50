import { z } from "zod";
import { EVENT_MODULES, STABLE_MODULES } from "../../../readmodels/module.js";
import { VIEW_TYPES } from "../../../readmodels/views/index.js";
import { ISO_INSTANT, isLeapSecond, isoMs, LEAP_SECOND_REFUSED } from "../../../query/filter.js";
import { QueryBodySchema } from "../../../query/index.js";
import { MAX_LOG_IDS } from "../../http/routes/state/schemas.js";
import { fromTypeBox } from "./output.js";

const TIME_FORMS = "a date (2026-07-01: UTC midnight) or a date-time with a UTC offset, seconds optional (2026-07-01T09:30Z, 2026-07-01T09:30:00+02:00)";

/** A time bound in the forms REST's since/until take, answered as the UTC instant (2026-07-01T00:00:00.000Z). */
const requiredInstant = (description: string) =>
  z.string().regex(ISO_INSTANT, `must be ${TIME_FORMS}`)
    .refine((v) => !isLeapSecond(v), LEAP_SECOND_REFUSED)
    // Only a value of the right form is told its day does not exist (zod runs every check).
    .refine((v) => !ISO_INSTANT.test(v) || isLeapSecond(v) || isoMs(v) !== undefined, `must be a real calendar date: ${TIME_FORMS}`)
    .transform((v) => new Date(isoMs(v)!).toISOString())
    .describe(`${description} Accepts ${TIME_FORMS}.`);

const instant = (description: string) => requiredInstant(description).optional();

/**
 * The log query body's fields as zod, derived from the TypeBox schema the REST query routes
 * validate with, so the wire shape has one source; its descriptions tell a model each field.
 */
const queryBody = fromTypeBox(QueryBodySchema, { descriptions: true }).shape;

/**
 * Argument schemas shared by the tools (names from the contract's "MCP tool arguments").
 * Closed sets are enums, so a model reads the valid values in the schema itself and a
 * wrong one comes back as a tool error listing them.
 */
export const args = {
  // Bounded like every list argument: zod reports a problem per item, and 200,000 wrong
  // names overflowed the stack of the answer's formatting.
  stableModules: z.array(z.enum(STABLE_MODULES)).max(50).optional()
    .describe(`Stable modules to return (at most 50); all with data when left out. One of: ${STABLE_MODULES.join(", ")}.`),
  moduleType: z.enum(EVENT_MODULES).describe("Event-state module to read."),
  viewType: z.enum(VIEW_TYPES).describe("View (template) to read."),
  format: z.enum(["markdown", "raw"]).default("raw")
    .describe("raw (default): JSON blocks with structured data and refs; markdown: one readable document with each block's log ids."),
  blockId: z.string().min(1).max(100).describe("Block id as listed by list_views_and_blocks (for example active_symptoms, missed_doses)."),
  since: instant("Only items at or after this time (event time)."),
  until: instant("Only items at or before this time (event time)."),
  /** A since/until described for its tool. */
  instant,
  requiredInstant,
  /** The horizon of a state read (REST's as_of and known_at): the state at a past time, rather than now. */
  horizon: {
    as_of: instant("The state as it stood at this time: folded from the logs whose event time is at or before it. Leave out for the current state."),
    known_at: instant("The state as the service knew it at this time (not after now): folded from the logs it had accepted by then, so logs sent in later are left out. Combines with as_of."),
  },
  cursor: z.string().min(1).max(500).optional().describe("next_cursor of the previous page; leave out for the first page."),
  /**
   * REST's log_ids. The schema only bounds the list's size; more than MAX_LOG_IDS distinct
   * ids are refused by logIdsParam, with REST's message, so repeats are not counted.
   */
  logIds: (what: string) => z.array(z.string().min(1).max(100)).max(1000).optional()
    .describe(`${what} (log_ids from get_changes, refs and log_id values of other answers); at most ${MAX_LOG_IDS} distinct ids. The other filters still apply.`),
  queryBody,
  limit: (fallback: number, max: number) =>
    z.number().int().min(1).max(max).default(fallback).describe(`Most items to return (default ${fallback}, at most ${max}); the answer may hold fewer to stay under about 20 kB.`),
};

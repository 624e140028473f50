import { Type, type ObjectOptions, type TObject, type TProperties } from "@sinclair/typebox";

/**
 * A route's query parameters, closed: a parameter the route does not declare is a 422
 * naming it and the ones the route takes (error-handler.ts), as a body's unknown field and
 * an MCP tool's unknown argument are. Dropped, a misspelt filter (`log_type` for
 * `log_types`, `asof` for `as_of`) answered as if it had matched everything. A parameter
 * some client sends that the route must take without acting on it is declared too, its
 * description saying it is ignored.
 */
export const QueryParams = <T extends TProperties>(properties: T, options: ObjectOptions = {}): TObject<T> =>
  Type.Object(properties, { ...options, additionalProperties: false });

/** The query of a route that takes no parameters. */
export const NoQueryParams = QueryParams({});

/** Whether a querystring schema refuses what it does not declare. */
export const isClosedQuery = (schema: unknown): boolean =>
  typeof schema === "object" && schema !== null && (schema as { additionalProperties?: unknown }).additionalProperties === false;

/** The parameter names a querystring schema declares, in its order. */
export function queryNames(schema: unknown): string[] {
  const properties = typeof schema === "object" && schema !== null ? (schema as { properties?: unknown }).properties : undefined;
  return typeof properties === "object" && properties !== null ? Object.keys(properties) : [];
}

/** asof, as_of, As-Of and asOf are one name: case, underscores and hyphens aside. */
const folded = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]/g, "");

/** Edits (insert, delete, substitute, swap two neighbours) from `a` to `b`, counted up to `max` + 1. */
function editsUpTo(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      row.push(d);
    }
    before = prev;
    prev = row;
  }
  return Math.min(prev[b.length]!, max + 1);
}

/**
 * The declared names `name` is likely a slip of (log_type → log_types, asof → as_of,
 * unitl → until): those fewest edits away, case, underscores and hyphens aside, within one
 * edit for a short name and two for one of six characters or more; among two spellings of
 * one parameter (pageSize, page_size), the nearer as written.
 */
export function nearNames(name: string, names: readonly string[]): string[] {
  const given = folded(name);
  if (given === "") return [];
  const max = given.length >= 6 ? 2 : 1;
  const scored = names
    .map((n) => ({ n, edits: editsUpTo(given, folded(n), max) }))
    .filter((x) => x.edits <= max)
    .map(({ n, edits }) => ({ n, score: edits * 1_000 + editsUpTo(name, n, name.length + n.length) }));
  const best = Math.min(...scored.map((x) => x.score));
  return scored.filter((x) => x.score === best).map((x) => x.n);
}

/** What an undeclared query parameter is told: the route, the names it takes, and the near one. */
export function unknownParamMessage(name: string, route: string, names: readonly string[]): string {
  if (names.length === 0) return `is not a query parameter of ${route}, which takes none`;
  const near = nearNames(name, names);
  const hint = near.length > 0 ? ` (did you mean ${near.join(" or ")}?)` : "";
  return `is not a query parameter of ${route}${hint}; it takes ${names.join(", ")}`;
}

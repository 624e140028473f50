/**
 * Whether `v` nests objects or arrays more than `limit` deep. Iterative, so any depth is
 * safe to measure: JSON.stringify, schema checks and the fold recurse, and a body of a
 * few thousand levels (well inside the size limit) overflows their stack.
 */
export function nestedDeeperThan(v: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[v, 0]];
  while (stack.length > 0) {
    const [x, depth] = stack.pop()!;
    if (x === null || typeof x !== "object") continue;
    if (depth >= limit) return true;
    for (const child of Object.values(x)) if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
  }
  return false;
}

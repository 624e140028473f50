import type { Horizon } from "../../../readmodels/as-of.js";
import { horizonOf } from "../../../src/state/as-of-read.js";

/** A tool's as_of/known_at as a horizon (undefined: the current state); a known_at after now is a tool error. */
export const toolHorizon = (a: { as_of?: string; known_at?: string }): Horizon | undefined => horizonOf(a.as_of, a.known_at, ["arguments"]);

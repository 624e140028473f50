import { api } from "../lib/api.js";
import { useLoad } from "../lib/use-load.js";
import type { EventModule } from "../../../client/types.js";

/** A chart's props: the patient, their time zone, and the time the page shows (none: now). */
export interface ChartProps {
  pid: string;
  timeZone: string;
  asOf?: string;
}

/** An event module of the patient as of `asOf` (GET /v1/state/{pid}/event-modules/{type}?as_of=), or now. */
export const useEventModule = (pid: string, type: string, asOf: string | undefined) =>
  useLoad(() => api<EventModule>("GET", `/v1/state/${pid}/event-modules/${type}`, { query: { as_of: asOf } }), [pid, type, asOf]);

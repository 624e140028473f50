import { itemExtensions } from "../../lib/extensions.js";
import type { Identity } from "../../lib/identity.js";
import { applyLifecycle, type Lifecycle } from "../../lib/lifecycle.js";
import { last } from "../../lib/lists.js";
import { finite, items, text } from "../../lib/payload.js";
import { cmpStamped } from "../../lib/time.js";
import { withDoc, type ReadModel } from "../../module.js";

export interface MoodReport {
  timestamp: string;
  /** 0 to 10; null when the report gave none. */
  intensity: number | null;
  log_id: string;
}

/** One tracked mood label (normalized). */
export interface Mood extends Lifecycle<MoodReport> {
  mood: string;
  /** "resolved" when the latest report gave intensity 0; a later report reopens it. */
  status: "active" | "resolved";
  current_intensity: number | null;
}

export interface LatestMoodReport {
  timestamp: string;
  log_id: string;
  moods: { mood: string; intensity: number | null }[];
}

export interface EmotionalStateDoc {
  moods: Mood[];
  /** The latest mood_report by event time, as reported. */
  latest_report: LatestMoodReport | null;
}

const identityOf = (m: Pick<Mood, "mood">): Identity => ({ codes: [], name: m.mood });

function settle(m: Mood): Mood {
  const latest = last(m.history) as MoodReport;
  return { ...m, current_intensity: latest.intensity, status: latest.intensity === 0 ? "resolved" : "active" };
}

export const handles = ["mood_report"] as const;

export const emotionalState: ReadModel<"emotional_state", EmotionalStateDoc, "mood_report"> = {
  key: "emotional_state",
  kind: "event",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ moods: [], latest_report: null }),
  evolve: (s, log) => {
    let list: readonly Mood[] = s.doc.moods;
    let clocks = s.clocks;
    const reported: LatestMoodReport["moods"] = [];
    for (const item of items(log.payload.moods)) {
      const mood = text(item.mood);
      if (mood === undefined) continue;
      const intensity = finite(item.intensity) ?? null;
      reported.push({ mood, intensity });
      ({ list, clocks } = applyLifecycle<Mood, MoodReport>({
        list, clocks, ns: "moods", log, item: { extensions: itemExtensions(log.payload, item) }, probe: { codes: [], name: mood }, identityOf,
        fields: [], settle,
        blank: { mood, status: "active", current_intensity: intensity },
        history: { timestamp: log.timestamp, intensity, log_id: log.id },
      }));
    }
    if (reported.length === 0) return s;
    const report = { timestamp: log.timestamp, log_id: log.id, moods: reported };
    const prev = s.doc.latest_report;
    const latest_report = prev && cmpStamped(prev, report) > 0 ? prev : report;
    return withDoc(s, { moods: [...list], latest_report }, clocks);
  },
};

/**
 * The dose adherence calendar's data: the adherence module's scheduled doses, read at
 * several past instants (each read covers the week before it) and merged, laid out by
 * the patient's local day. The statuses are the server's (readmodels/modules/adherence/
 * schedule.ts); nothing here decides whether a dose was missed.
 */

export type DoseStatus = "taken" | "skipped" | "unreported";

/** The part of the adherence module's `schedule` entries the calendar reads. */
export interface ScheduleRead {
  medication_name: string | null;
  rxnorm_cui: string | null;
  /** The latest event time the module had seen: the read's end. */
  until: string;
  doses: { scheduled_time: string; status: DoseStatus }[];
}

/** Days the calendar shows, ending on the latest read's day. @default 28 */
export const CALENDAR_DAYS = 28;
/**
 * Days between reads. A read covers the 7 days before its latest log, which can be a
 * little before the instant asked for: reads 6 days apart overlap, so no dose falls
 * between two of them.
 */
export const READ_STEP_DAYS = 6;
const DAY_MS = 86_400_000;

/** The instants to read the module at, after a first read ending at `until`, to cover `days` days. */
export function earlierReads(until: string, days = CALENDAR_DAYS): string[] {
  const end = Date.parse(until);
  const count = Math.ceil((days - 7) / READ_STEP_DAYS);
  return Array.from({ length: count }, (_, i) => new Date(end - (i + 1) * READ_STEP_DAYS * DAY_MS).toISOString());
}

/** The end of a read: its latest schedule's `until`, or undefined when nothing is scheduled. */
export const readEnd = (read: readonly ScheduleRead[]): string | undefined =>
  read.reduce<string | undefined>((end, s) => (end === undefined || Date.parse(s.until) > Date.parse(end) ? s.until : end), undefined);

/** One scheduled dose as the calendar shows it: local time of day and status. */
export interface DoseCell {
  time: string;
  status: DoseStatus;
}

export interface MedicationRow {
  name: string;
  /** Local date (YYYY-MM-DD) → that day's doses, by time. */
  days: Map<string, DoseCell[]>;
  counts: Record<DoseStatus, number>;
}

export interface Calendar {
  /** Local dates, oldest first. */
  days: string[];
  medications: MedicationRow[];
  counts: Record<DoseStatus, number>;
}

const keyOf = (s: ScheduleRead) => s.rxnorm_cui ?? (s.medication_name ?? "").trim().toLowerCase();

/** A zone's local date and time of day of an instant. */
function localParts(timeZone: string): (iso: string) => { date: string; time: string } {
  const f = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
  return (iso) => {
    const p = Object.fromEntries(f.formatToParts(new Date(iso)).map((x) => [x.type, x.value]));
    return { date: `${p.year}-${p.month}-${p.day}`, time: `${p.hour}:${p.minute}` };
  };
}

const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);

/**
 * The calendar of `reads`, the latest read first: a dose in several reads takes its status
 * from the latest (a report that came later is in it), over the `days` local days up to
 * the latest read's end, from the first day with a dose.
 */
export function buildCalendar(reads: readonly (readonly ScheduleRead[])[], timeZone: string, days = CALENDAR_DAYS): Calendar {
  const zero = () => ({ taken: 0, skipped: 0, unreported: 0 });
  const end = readEnd(reads[0] ?? []);
  if (end === undefined) return { days: [], medications: [], counts: zero() };
  const local = localParts(timeZone);
  const lastDay = local(end).date;
  const firstDay = addDays(lastDay, 1 - days);
  const meds = new Map<string, { name: string; doses: Map<string, DoseStatus> }>();
  for (const read of reads) {
    for (const s of read) {
      const key = keyOf(s);
      const m = meds.get(key) ?? { name: s.medication_name ?? s.rxnorm_cui ?? "unnamed medication", doses: new Map() };
      meds.set(key, m);
      for (const d of s.doses) if (!m.doses.has(d.scheduled_time)) m.doses.set(d.scheduled_time, d.status);
    }
  }
  const counts = zero();
  let earliest = lastDay;
  const medications = [...meds.values()].map((m): MedicationRow => {
    const row: MedicationRow = { name: m.name, days: new Map(), counts: zero() };
    for (const [at, status] of [...m.doses].sort(([a], [b]) => Date.parse(a) - Date.parse(b))) {
      const { date, time } = local(at);
      if (date < firstDay || date > lastDay) continue;
      if (date < earliest) earliest = date;
      row.days.set(date, [...(row.days.get(date) ?? []), { time, status }]);
      row.counts[status]++;
      counts[status]++;
    }
    return row;
  });
  const shown: string[] = [];
  for (let d = earliest; d <= lastDay; d = addDays(d, 1)) shown.push(d);
  return { days: shown, medications: medications.sort((a, b) => a.name.localeCompare(b.name)), counts };
}

/** A local date with its weekday: "Mon 2026-06-01". */
export const dayLabel = (date: string) => `${new Date(`${date}T12:00:00Z`).toLocaleDateString("en-GB", { weekday: "short", timeZone: "UTC" })} ${date}`;

/** Counts as a sentence: "12 taken, 2 skipped, 1 not reported". */
export const countsText = (c: Record<DoseStatus, number>) => `${c.taken} taken, ${c.skipped} skipped, ${c.unreported} not reported`;

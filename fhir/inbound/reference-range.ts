import type { Observation, ObservationReferenceRange, Quantity } from "@medplum/fhirtypes";
import { codeOf, dateOf } from "../lib/datatypes.js";
import type { MapContext, MapIssue } from "../types.js";

type Path = (string | number)[];

/**
 * What lab_results can hold of an Observation's reference ranges: bounds in the value's unit,
 * or a `reference_range` text. The text is not a catalog field: it is where the hosted SDK
 * sends a range, and the lab module reads bounds from it only when it is a bare "low-high"
 * (in the value's unit), so a text naming another unit is kept and never applied.
 */
export type RangeFields = { reference_range_low?: number; reference_range_high?: number; reference_range?: string };

/** A unit's size in its kind's base unit (g, mol or a count per litre), by the spellings UCUM codes and senders use, lower-cased. */
const AMOUNT: Readonly<Record<string, { kind: "mass" | "substance"; size: number }>> = {
  g: { kind: "mass", size: 1 }, mg: { kind: "mass", size: 1e-3 }, ug: { kind: "mass", size: 1e-6 }, "µg": { kind: "mass", size: 1e-6 },
  mcg: { kind: "mass", size: 1e-6 }, ng: { kind: "mass", size: 1e-9 }, pg: { kind: "mass", size: 1e-12 },
  mol: { kind: "substance", size: 1 }, mmol: { kind: "substance", size: 1e-3 }, umol: { kind: "substance", size: 1e-6 },
  "µmol": { kind: "substance", size: 1e-6 }, nmol: { kind: "substance", size: 1e-9 }, pmol: { kind: "substance", size: 1e-12 },
};
const VOLUME: Readonly<Record<string, number>> = { l: 1, dl: 0.1, ml: 1e-3, ul: 1e-6, "µl": 1e-6 };

/** A concentration unit as kind and size per litre ("mg/dL", "10*9/L"), else undefined: only these convert. */
function concentration(unit: string): { kind: string; size: number } | undefined {
  const [num, den, ...rest] = unit.trim().toLowerCase().split("/");
  if (num === undefined || den === undefined || rest.length > 0 || VOLUME[den] === undefined) return undefined;
  const count = /^10[*^](\d{1,2})$/.exec(num);
  const amount = count ? { kind: "count", size: 10 ** Number(count[1]) } : AMOUNT[num];
  return amount ? { kind: amount.kind, size: amount.size / VOLUME[den] } : undefined;
}

/** The names a quantity's unit goes by (UCUM code, unit text), compared trimmed and lower-cased as the lab module compares units. */
const namesOf = (q: Quantity | undefined): string[] => [q?.code, q?.unit].flatMap((u) => (u?.trim() ? [u.trim().toLowerCase()] : []));

/**
 * A bound in the value's unit: as sent when it names no unit or the value's, converted when both
 * are concentrations of the same kind (g/L to g/dL; never mass to molar, which depends on the
 * analyte), else undefined.
 */
function inUnitOf(bound: Quantity & { value: number }, value: Quantity | undefined): number | undefined {
  const own = namesOf(bound);
  const want = namesOf(value);
  if (own.length === 0 || own.some((u) => want.includes(u))) return bound.value;
  const from = own.map(concentration).find((c) => c !== undefined);
  const to = want.map(concentration).find((c) => c !== undefined);
  if (!from || !to || from.kind !== to.kind) return undefined;
  return Number(((bound.value * from.size) / to.size).toPrecision(12));
}

/** Completed years, months, weeks or days between two dates (YYYY-MM-DD), by the UCUM code of an Age. */
function ageIn(unit: string, born: string, on: string): number | undefined {
  const [by, bm, bd] = born.split("-").map(Number) as [number, number, number];
  const [y, m, d] = on.split("-").map(Number) as [number, number, number];
  const months = (y - by) * 12 + (m - bm) - (d < bd ? 1 : 0);
  const days = Math.floor((Date.UTC(y, m - 1, d) - Date.UTC(by, bm - 1, bd)) / 86_400_000);
  return ({ a: Math.floor(months / 12), mo: months, wk: Math.floor(days / 7), d: days } as Record<string, number>)[unit];
}

/** Whether the patient's age at the observation lies in the range's `age`; undefined when it cannot be told. */
function ageApplies(age: NonNullable<ObservationReferenceRange["age"]>, o: Observation, ctx: MapContext): boolean | undefined {
  const patient = o.subject?.reference ? ctx.resolve(o.subject.reference) : undefined;
  const born = patient?.resourceType === "Patient" ? dateOf(patient.birthDate) : undefined;
  const on = dateOf(o.effectiveDateTime ?? o.effectiveInstant ?? o.effectivePeriod?.start);
  if (!born || !on) return undefined;
  for (const [bound, inside] of [[age.low, (a: number, v: number) => a >= v], [age.high, (a: number, v: number) => a <= v]] as const) {
    if (bound?.value === undefined) continue;
    const a = ageIn(bound.code ?? "", born, on);
    if (a === undefined) return undefined;
    if (!inside(a, bound.value)) return false;
  }
  return true;
}

/**
 * The range that applies to the patient: of the normal ranges (type absent or normal) without
 * `appliesTo` (a population the service cannot test), those whose `age` holds the patient's
 * (birth date from a Patient the subject references in the same Bundle), else those without
 * `age`. Several that differ are no range: picking one would be a guess.
 */
function applicable(o: Observation, ctx: MapContext): { range: ObservationReferenceRange; index: number } | undefined {
  const normal = (o.referenceRange ?? []).map((range, index) => ({ range, index }))
    .filter(({ range }) => !range.appliesTo?.length && [undefined, "normal"].includes(codeOf(range.type)));
  const byAge = normal.filter(({ range }) => range.age && ageApplies(range.age, o, ctx) === true);
  const tier = byAge.length > 0 ? byAge : normal.filter(({ range }) => !range.age);
  const same = tier.every(({ range }) => JSON.stringify(range) === JSON.stringify(tier[0]!.range));
  return same ? tier[0] : undefined;
}

/** A range as text with its unit ("3.9-5.6 mmol/L", "<=5.7 %"): the form that is never read as bounds in another unit. */
function rangeText(r: ObservationReferenceRange): string | undefined {
  const unit = r.low?.code ?? r.low?.unit ?? r.high?.code ?? r.high?.unit;
  const [lo, hi] = [r.low?.value, r.high?.value];
  const text = lo !== undefined && hi !== undefined ? `${lo}-${hi}` : lo !== undefined ? `>=${lo}` : hi !== undefined ? `<=${hi}` : undefined;
  return text === undefined ? r.text : `${text}${unit ? ` ${unit}` : ""}`;
}

/** The result's range fields from the Observation's reference ranges (see applicable), or where its bounds are inverted. */
export function rangeFieldsOf(o: Observation, path: Path, ctx: MapContext): RangeFields | MapIssue {
  const picked = applicable(o, ctx);
  if (!picked) return {};
  const { range, index } = picked;
  const valued = (q: Quantity | undefined) => (q?.value === undefined ? undefined : { ...q, value: q.value });
  const [lowQ, highQ] = [valued(range.low), valued(range.high)];
  if (!lowQ && !highQ) return range.text ? { reference_range: range.text } : {};
  const low = lowQ ? inUnitOf(lowQ, o.valueQuantity) : undefined;
  const high = highQ ? inUnitOf(highQ, o.valueQuantity) : undefined;
  // A bound that cannot be put in the value's unit makes the whole range text: bounds of two units are never mixed.
  if ((lowQ && low === undefined) || (highQ && high === undefined)) {
    const text = rangeText(range);
    return text ? { reference_range: text } : {};
  }
  if (low !== undefined && high !== undefined && low > high) {
    return { path: [...path, "referenceRange", index, "high"], message: `${high} is below the range's low ${low}` };
  }
  return { ...(low !== undefined ? { reference_range_low: low } : {}), ...(high !== undefined ? { reference_range_high: high } : {}) };
}

import { Optional, Type, type TSchema, type TLiteral, type TUnion, type TObject, type TProperties, type ObjectOptions } from "@sinclair/typebox";

// Patterns stay anchored and backtracking-free: they run on every log on the hot path.
// Dates are checked by pattern rather than a format so the published JSON Schema refuses
// exactly what the service refuses: days 29-31 only in months that have them, and
// 29 February only in leap years (divisible by 4, centuries only when divisible by 400).
const REAL_YMD =
  "(\\d{4}-((0[13578]|1[02])-(0[1-9]|[12]\\d|3[01])|(0[469]|11)-(0[1-9]|[12]\\d|30)|02-(0[1-9]|1\\d|2[0-8]))" +
  "|(\\d\\d(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)-02-29)";
// Any day 01-31 in any month: the form alone, to tell a malformed value from a day the calendar lacks.
const ANY_DAY_YMD = "\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])";
const HMS = "T([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,9})?)?(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d)";
const dateForms = (ymd: string) => ({ date: `^${ymd}$`, datetime: `^${ymd}${HMS}$`, either: `^${ymd}(${HMS})?$` });
const REAL = dateForms(REAL_YMD);
const ANY_DAY = dateForms(ANY_DAY_YMD);
export const DATE_PATTERN = REAL.date;
export const DATETIME_PATTERN = REAL.datetime;
export const DATE_OR_DATETIME_PATTERN = REAL.either;

/**
 * Per date pattern, the same form with any day 01-31: a value it matches but the pattern
 * refuses is well formed and names a day that does not exist (2026-02-30).
 */
export const ANY_DAY_FORM: Readonly<Record<string, RegExp>> = {
  [DATE_PATTERN]: new RegExp(ANY_DAY.date),
  [DATETIME_PATTERN]: new RegExp(ANY_DAY.datetime),
  [DATE_OR_DATETIME_PATTERN]: new RegExp(ANY_DAY.either),
};
export const TIME_OF_DAY_PATTERN = "^([01]\\d|2[0-3]):[0-5]\\d$";
export const LANGUAGE_TAG_PATTERN = "^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$";

/** What each pattern means, for error messages ("must be an ISO 8601 date (YYYY-MM-DD)"). */
export const PATTERN_MEANING: Readonly<Record<string, string>> = {
  [DATE_PATTERN]: "an ISO 8601 date (YYYY-MM-DD)",
  [DATETIME_PATTERN]: "an ISO 8601 datetime with Z or a UTC offset (YYYY-MM-DDThh:mm[:ss[.fff]]Z)",
  [DATE_OR_DATETIME_PATTERN]: "an ISO 8601 date (YYYY-MM-DD) or datetime (YYYY-MM-DDThh:mm[:ss]Z)",
  [TIME_OF_DAY_PATTERN]: "a 24-hour time of day HH:MM",
  [LANGUAGE_TAG_PATTERN]: "a BCP 47 language tag (for example en, en-US, es-419)",
};

type Opts = { description?: string; [k: string]: unknown };

// The function Type.Optional calls, which does not need Type as `this`.
export const Opt = Optional;
export const Str = (o: Opts = {}) => Type.String(o);
/** A required label or identifier: an empty string carries nothing, so it is refused. */
export const ReqStr = (o: Opts = {}) => Type.String({ minLength: 1, ...o });
export const Num = (o: Opts = {}) => Type.Number(o);
export const Int = (o: Opts = {}) => Type.Integer(o);
export const Bool = (o: Opts = {}) => Type.Boolean(o);
/** Durations and counts: never negative. */
export const Count = (o: Opts = {}) => Type.Integer({ minimum: 0, ...o });
export const Amount = (o: Opts = {}) => Type.Number({ minimum: 0, ...o });
export const Percent = (o: Opts = {}) => Type.Number({ minimum: 0, maximum: 100, ...o });
export const Strings = (o: Opts = {}) => Type.Array(Type.String(), o);
export const List = <S extends TSchema>(item: S, o: Opts = {}) => Type.Array(item, o);

export function Enum<const V extends readonly string[]>(values: V, o: Opts = {}): TUnion<TLiteral<V[number]>[]> {
  return Type.Union(values.map((v) => Type.Literal(v)), o);
}
export const Nullable = <S extends TSchema>(s: S, o: Opts = {}) => Type.Union([s, Type.Null()], o);

/** An open JSON object (payloads, metadata): any members, serialized as they are. */
export const OpenObject = Type.Object({}, { additionalProperties: true });

export const DateStr = (o: Opts = {}) => Type.String({ pattern: DATE_PATTERN, ...o });
export const DateTimeStr = (o: Opts = {}) => Type.String({ pattern: DATETIME_PATTERN, ...o });
/** For date-like fields the catalog types only as "string": either form is accepted. */
export const DateOrDateTimeStr = (o: Opts = {}) => Type.String({ pattern: DATE_OR_DATETIME_PATTERN, ...o });
export const TimeOfDay = (o: Opts = {}) => Type.String({ pattern: TIME_OF_DAY_PATTERN, ...o });
export const LanguageTag = (o: Opts = {}) => Type.String({ pattern: LANGUAGE_TAG_PATTERN, description: "BCP 47 language tag", ...o });

/** Objects are open: clients send extra fields, and those are kept, never refused. */
export const Obj = <P extends TProperties>(props: P, o: ObjectOptions = {}): TObject<P> => Type.Object(props, o);
/** A required list of entries: an empty list reports nothing, so at least one entry is needed. */
export const Entries = <S extends TSchema>(item: S, o: Opts = {}) => Type.Array(item, { minItems: 1, ...o });

/**
 * The structured form of `source`: who asserted the fact. Every field is optional and
 * unknown fields are kept, so a client can add provenance the service does not model.
 */
export const SourceObject = Obj(
  {
    type: Opt(Str({ description: "Kind of source, for example patient, clinician, caregiver, device, ehr, lab, agent, system" })),
    name: Opt(Str({ description: "Display name of the person, system or device" })),
    id: Opt(Str({ description: "Identifier of the source within `system`" })),
    system: Opt(Str({ description: "Namespace of `id`, for example an EHR or device vendor URI" })),
    reported_by: Opt(Str({ description: "Who entered or relayed the fact when not the asserter, for example caregiver" })),
  },
  { description: "Structured Source object: who asserted the fact. Open: extra fields are kept." },
);

export const Source = Type.Union([Str({ description: "Legacy string form" }), SourceObject], {
  description: "Who asserted the fact: a legacy string or a Source object.",
});

export const Extensions = Obj({}, {
  description: "Open key/value bag for client fields without a typed slot; merged at leaf level, latest event timestamp wins.",
});

/** Shared slots: spread into a payload so every type spells them the same way. */
export const withSource = { source: Opt(Source) };
export const extensible = { source: Opt(Source), extensions: Opt(Extensions) };

export const Address = Obj({
  street: Opt(Str()), city: Opt(Str()), state: Opt(Str()), zip: Opt(Str()), country: Opt(Str()),
});

export const Period = Obj(
  { start_datetime: Opt(DateTimeStr()), end_datetime: Opt(DateTimeStr()) },
  { description: "ISO 8601 UTC window; always include it on device data. end_datetime must not precede start_datetime." },
);

export const Clinician = Obj({ name: Opt(Str()), npi: Opt(Str()), role: Opt(Str()) });

/** The contract's multi-entry actions: "remove/delete", so either word removes. */
export const ADD_UPDATE_REMOVE = ["add", "update", "remove", "delete"] as const;
export const EntryAction = (o: Opts = {}) => Enum(ADD_UPDATE_REMOVE, o);

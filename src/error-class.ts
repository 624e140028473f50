/**
 * What a log line may say of an error: ClickHouse's error code and name, or the error's
 * class and code. Never its message: ClickHouse quotes the rows it could not read
 * (patient ids, idempotency keys, payload text), a parse error quotes the text, and
 * service logs are no place for patient data.
 */
export function errorClass(err: unknown): { error: string; code?: number | string } {
  const e = (err ?? {}) as { name?: unknown; code?: unknown; clickhouseCode?: unknown; message?: unknown };
  const message = typeof e.message === "string" ? e.message : "";
  // The last "(NAME)" of a ClickHouse exception: its message ends with the error's name, after any quoted row.
  const named = message.includes("DB::Exception") ? [...message.matchAll(/\(([A-Z][A-Z0-9_]{2,})\)/g)].at(-1)?.[1] : undefined;
  const code = typeof e.clickhouseCode === "number" ? e.clickhouseCode : (/^Code: (\d+)\./.exec(message)?.[1] ?? (typeof e.code === "string" || typeof e.code === "number" ? e.code : undefined));
  const error = named ?? (typeof e.name === "string" ? e.name : "Error");
  return code === undefined ? { error } : { error, code: typeof code === "string" && /^\d+$/.test(code) ? Number(code) : code };
}

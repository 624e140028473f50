const CLOCKS_TAIL = ',"clocks":';
const UPDATED_AT = ',"updated_at":';

/**
 * A stored module entry as a read answers it (`{module_type, payload, created_at,
 * updated_at}`), cut from its text without parsing it: the fold builds every entry with
 * `clocks` last (evolvePatient), and an unescaped `,"clocks":` can only be a key, so the
 * last one is the entry's own. Parsing a module and serializing it again was most of a
 * read's allocation, and the collections it caused were the read tail. Text of any other
 * shape is parsed instead.
 */
export function moduleReadJson(raw: string): string {
  const cut = raw.lastIndexOf(CLOCKS_TAIL);
  // The fold's layout: clocks right after updated_at, whose value is a timestamp or null.
  const updated = cut > 0 ? raw.lastIndexOf(UPDATED_AT, cut) : -1;
  if (updated > 0 && raw.startsWith('{"module_type":') && raw.endsWith("}") && !/[{[]/.test(raw.slice(updated, cut))) return raw.slice(0, cut) + "}";
  const { module_type, payload, created_at, updated_at } = JSON.parse(raw) as Record<string, unknown>;
  return JSON.stringify({ module_type, payload, created_at, updated_at });
}

import { normName } from "./payload.js";

/**
 * Identity of a tracked entity: codes in priority order (e.g. snomed_code, then
 * meddra_code), then a normalized name. A probe matches an entry by its first code the
 * entry shares; failing that, by name, provided no code present on both sides disagrees
 * (two different SNOMED codes are two different things even under one name).
 */
export interface Identity {
  codes: readonly (string | null | undefined)[];
  name: string | null | undefined;
  /**
   * Other normalized names the entry answers to: the names it was reported under before a
   * report matched by code renamed it. A probe's name matches them like the entry's own.
   */
  aliases?: readonly string[];
}

export function findByIdentity<E>(list: readonly E[], probe: Identity, identityOf: (e: E) => Identity): number {
  for (let c = 0; c < probe.codes.length; c++) {
    const code = probe.codes[c];
    if (!code) continue;
    const i = list.findIndex((e) => identityOf(e).codes[c] === code);
    if (i >= 0) return i;
  }
  if (!probe.name) return -1;
  const n = normName(probe.name);
  const agrees = (id: Identity) => probe.codes.every((code, c) => !code || !id.codes[c] || id.codes[c] === code);
  const i = list.findIndex((e) => {
    const id = identityOf(e);
    return !!id.name && normName(id.name) === n && agrees(id);
  });
  if (i >= 0) return i;
  // An entry's current name goes first: another entry may once have been reported under it.
  return list.findIndex((e) => {
    const id = identityOf(e);
    return id.aliases !== undefined && id.aliases.includes(n) && agrees(id);
  });
}

/** A string key for an identity (first code, else normalized name), for clock paths and grouping. */
export function identityKey(id: Identity): string {
  for (let c = 0; c < id.codes.length; c++) if (id.codes[c]) return `${c}:${id.codes[c]}`;
  return `n:${normName(id.name ?? "")}`;
}

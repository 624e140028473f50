import type { LogPayloads } from "../../../catalog/payloads.js";
import type { SourceRef } from "../../lib/lists.js";
import type { Obj } from "../../lib/payload.js";
import { evolvePatchDoc } from "../../lib/patch-doc.js";
import type { ReadModel } from "../../module.js";

export interface Address {
  street?: string;
  city?: string;
  state?: string;
  zip?: string;
  country?: string;
}

/** Merged demographics: each field as last written by event time; absent until first given. */
export interface DemographicsDoc {
  name?: string;
  /** YYYY-MM-DD */
  dob?: string;
  sex?: string;
  marital_status?: string;
  address?: Address;
  /** Legacy scalars, superseded by telecom but still accepted. */
  phone?: string;
  email?: string;
  telecom?: { system?: string; value?: string; use?: string; rank?: number }[];
  addresses?: Address[];
  identifiers?: { system?: string; value: string; type?: string }[];
  /** BCP 47 */
  language?: string;
  ethnicity?: string;
  extensions: Obj;
  sources: SourceRef[];
}

/** Whole-value fields: a new `address` replaces the old one rather than merging into it. */
export const FIELDS = [
  "name", "dob", "sex", "marital_status", "address", "phone", "email", "telecom", "addresses", "identifiers",
  "language", "ethnicity",
] as const satisfies readonly (keyof LogPayloads["demographics"])[];

export const handles = ["demographics"] as const;

export const demographics: ReadModel<"demographics", DemographicsDoc, "demographics"> = {
  key: "demographics",
  kind: "stable",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ extensions: {}, sources: [] }),
  evolve: (s, log) => evolvePatchDoc(s, log, FIELDS),
};

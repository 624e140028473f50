import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import { Type } from "@sinclair/typebox";
import type { Bundle } from "@medplum/fhirtypes";
import type { Services } from "../../../services.js";
import { SEARCH_TYPES, type SearchType } from "../../../../fhir/outbound/index.js";
import { readFhirSearch, readFhirSummary } from "../../../../src/state/fhir-read.js";
import type { Snapshot } from "../../../../src/state/state-reader.js";
import { ErrorRef, OpenObject } from "../../schemas.js";
import { HorizonQuery, horizonParam, ListParam, PatientParams } from "./schemas.js";
import { markFreshness } from "./index.js";
import { QueryParams } from "../../query-params.js";

export const FHIR_JSON = "application/fhir+json";

/** A FHIR R4 Bundle as these routes answer it (the resources are FHIR's own shapes, not described here). */
export const FhirBundleSchema = Type.Object(
  {
    resourceType: Type.Literal("Bundle"),
    id: Type.String(),
    type: Type.String({ description: "document (the summary) or searchset" }),
    identifier: Type.Optional(Type.Object({ system: Type.String(), value: Type.String() }, { description: "The document's identifier: a digest of its content" })),
    timestamp: Type.Optional(Type.String({ description: "When the document was assembled (the time of the read)" })),
    total: Type.Optional(Type.Integer({ description: "searchset: the number of matches" })),
    entry: Type.Array(
      Type.Object({
        fullUrl: Type.String({ description: "urn:uuid, stable for the patient and the entity" }),
        resource: OpenObject,
        search: Type.Optional(Type.Object({ mode: Type.String({ description: "match, or include (a Provenance asked for by _revinclude)" }) })),
      }),
    ),
  },
  { $id: "FhirBundle", additionalProperties: true, description: "A FHIR R4 Bundle (docs/fhir.md)" },
);
const FhirBundleRef = Type.Unsafe<typeof FhirBundleSchema.static>(Type.Ref("FhirBundle"));

/** 200 answered as application/fhir+json, the service's errors as JSON. */
const fhirResponses = {
  200: { description: "A FHIR R4 Bundle", content: { [FHIR_JSON]: { schema: FhirBundleRef } } },
  "4xx": ErrorRef,
  "5xx": ErrorRef,
};

function sendFhir(reply: FastifyReply, snap: Snapshot, bundle: Bundle): FastifyReply {
  markFreshness(reply, snap);
  return reply.type(`${FHIR_JSON}; charset=utf-8`).send(JSON.stringify(bundle));
}

/**
 * What FHIR clients send on every read and the answer already is: `_format` (JSON only), `_pretty`,
 * and `_count` (every match comes in one page). Taken so a standard client works, and ignored;
 * a filter the route does not have stays a 422, since ignored it would match everything.
 */
const FhirClientParams = {
  _format: Type.Optional(Type.Union(["json", "application/json", "application/fhir+json"].map((f) => Type.Literal(f)), { description: "Accepted and ignored: answers are application/fhir+json (XML is not served)" })),
  _pretty: Type.Optional(Type.Union([Type.Literal("true"), Type.Literal("false")], { description: "Accepted and ignored" })),
  _count: Type.Optional(Type.String({ pattern: "^[0-9]{1,6}$", description: "Accepted and ignored: a search answers every match in one page" })),
};

const RevInclude = { _revinclude: Type.Optional(Type.Literal("Provenance:target", { description: "Provenance:target adds each match's Provenance (the logs it came from), search mode include" })) };

/** The patient's state as FHIR R4: the patient summary document and searchsets by resource type (docs/fhir.md). */
export const stateFhirRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  const config = { scope: "sdk:state-read" as const };
  const tags = ["state", "fhir"];
  const deps = { reader: s.stateReader, horizon: s.horizonReader };

  app.get(
    "/v1/state/:pid/fhir/summary",
    {
      config,
      schema: {
        summary: "The patient's state as an International Patient Summary style FHIR R4 document Bundle (application/fhir+json)",
        tags,
        params: PatientParams,
        querystring: QueryParams({ ...HorizonQuery, ...FhirClientParams }),
        response: fhirResponses,
      },
    },
    async (req, reply) => {
      const { bundle, snap } = await readFhirSummary(deps, req.principal, req.params.pid, horizonParam(req.query));
      return sendFhir(reply, snap, bundle);
    },
  );

  app.get(
    "/v1/state/:pid/fhir/Observation",
    {
      config,
      schema: {
        summary: "Lab, procedure-result and vital-sign Observations as a FHIR searchset, by code, category and effective date",
        tags,
        params: PatientParams,
        querystring: QueryParams({
          ...FhirClientParams,
          code: Type.Optional(ListParam("system|code, |code or code; a comma means any of, a repeat all of (LOINC 4548-4, http://loinc.org|8867-4)")),
          category: Type.Optional(ListParam("laboratory, vital-signs or procedure, as system|code or code")),
          date: Type.Optional(ListParam("The effective time: a FHIR date or dateTime with a prefix eq (default), ne, gt, lt, ge or le; repeat for a range (ge2026-01-01&date=lt2026-02-01)")),
          ...RevInclude,
          ...HorizonQuery,
        }),
        response: fhirResponses,
      },
    },
    async (req, reply) => {
      const { bundle, snap } = await readFhirSearch(deps, req.principal, req.params.pid, "Observation", req.query, horizonParam(req.query));
      return sendFhir(reply, snap, bundle);
    },
  );

  for (const type of Object.keys(SEARCH_TYPES) as SearchType[]) {
    if (type === "Observation") continue;
    app.get(
      `/v1/state/:pid/fhir/${type}`,
      {
        config,
        schema: {
          summary: `The patient's ${type} resources as a FHIR searchset (as the summary maps them)`,
          tags,
          params: PatientParams,
          querystring: QueryParams({ ...RevInclude, ...HorizonQuery, ...FhirClientParams }),
          response: fhirResponses,
        },
      },
      async (req, reply) => {
        const { bundle, snap } = await readFhirSearch(deps, req.principal, req.params.pid, type, req.query, horizonParam(req.query));
        return sendFhir(reply, snap, bundle);
      },
    );
  }
};

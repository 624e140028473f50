import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../../support/stack.js";
import { def, expectSdkParses, req, sdkClient, sdkOutcome, type SdkClient, type Shape } from "../../support/olira-sdk.js";

/** A catalog entry as the SDK's model reads it (newer SDKs add target_modules and user_facing). */
const LOG_TYPE: Shape = {
  subtype: req("string"),
  category: req("string"),
  display_name: req("string"),
  description: req("string"),
  aliases: def("list", { of: "string" }),
  payload_schema: def("object"),
  payload_description: def("string"),
  sources: def("list", { of: "string" }),
  version: def("int"),
  target_modules: def("list", { of: "string" }),
  user_facing: def("bool"),
};

/** The limits the SDK reads at start (and replaces with its defaults on any failure). */
const SDK_CONFIG: Shape = { ingestion_max_file_bytes: def("int"), signals_max_sync_body_bytes: def("int") };

let t: TestStack;
let eventLogOnly: SdkClient;
let patientToken: SdkClient;
beforeAll(async () => {
  t = await startStack({ PSS_MAX_UPLOAD_BYTES: String(3 * 1024 ** 3) });
  const admin = sdkClient(t.app, t.adminKey);
  const key = (await admin.post("/v1/api-keys", { name: "gateway", scopes: ["sdk:event-log"] })).json().key;
  eventLogOnly = sdkClient(t.app, key);
  const pid = (await admin.post("/v1/patients", { sex: "unknown", timezone: "UTC", external_identifiers: [] })).json().id;
  patientToken = sdkClient(t.app, (await admin.post("/v1/auth/token", { patient_id: pid })).json().access_token);
});
afterAll(async () => {
  await t?.close();
});

describe("GET /v1/log-types as the SDK's list_log_types() reads it", () => {
  it("lists all 55 types under data, each parsing as the SDK's log type, beside today's log_types", async () => {
    const r = await eventLogOnly.get("/v1/log-types");
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body.data).toHaveLength(55);
    expect(body.log_types).toEqual(body.data);
    for (const entry of body.data) expectSdkParses(entry, LOG_TYPE);
  });

  it("describes a type in the hosted product's words and in ours", async () => {
    const symptom = (await eventLogOnly.get("/v1/log-types")).json().data.find((x: { subtype: string }) => x.subtype === "symptom_report");
    expect(symptom).toMatchObject({
      log_type: "symptom_report",
      category: "symptom",
      group: "symptom",
      display_name: "Symptom report",
      description: expect.stringContaining("instrument"),
      payload_description: expect.stringMatching(/^instrument \(required\).*symptoms\[\] \(required\)/),
      sources: ["logged"],
      version: 1,
      target_modules: ["event_state:symptoms"],
      user_facing: true,
      aliases: expect.arrayContaining(["symptom_reported"]),
    });
    expect(symptom.payload_schema).toEqual(symptom.schema);
    expect(symptom.payload_schema.required).toContain("symptoms");
    const meds = (await eventLogOnly.get("/v1/log-types/medication_list_update")).json();
    expect(meds).toMatchObject({ target_modules: ["stable:medications", "event_state:adherence"], user_facing: false });
    expect((await eventLogOnly.get("/v1/log-types/spo2_reading")).json().display_name).toBe("SpO2 reading");
  });
});

describe("GET /v1/log-types/{name} as the SDK's get_log_type() reads it", () => {
  it("answers a canonical name and a legacy name with the canonical entry at the top level", async () => {
    for (const name of ["mood_report", "moods_report"]) {
      const r = await patientToken.get(`/v1/log-types/${name}`);
      expect(r.statusCode).toBe(200);
      expectSdkParses(r.json(), LOG_TYPE);
      expect(r.json().subtype).toBe("mood_report");
    }
  });

  it("answers an unknown name with 404, which the SDK raises as a validation error", async () => {
    const r = await eventLogOnly.get("/v1/log-types/not_a_type");
    expect(sdkOutcome(r.statusCode)).toBe("validation");
    expect(r.json().message).toContain("not_a_type");
  });
});

describe("GET /v1/sdk/config", () => {
  it("answers any credential with this service's real limits", async () => {
    for (const client of [eventLogOnly, patientToken, sdkClient(t.app, t.adminKey)]) {
      const r = await client.get("/v1/sdk/config");
      expect(r.statusCode).toBe(200);
      expectSdkParses(r.json(), SDK_CONFIG);
      expect(r.json()).toEqual({
        ingestion_max_file_bytes: 3 * 1024 ** 3,
        signals_max_sync_body_bytes: t.config.maxBodyBytes,
        max_request_body_bytes: t.config.maxBodyBytes,
        logs_batch_max_body_bytes: 32 * 1024 * 1024,
        logs_batch_max_logs: t.config.maxBatchLogs,
      });
    }
  });

  it("needs a credential", async () => {
    expect((await t.app.inject({ method: "GET", url: "/v1/sdk/config" })).statusCode).toBe(401);
  });
});

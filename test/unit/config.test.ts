import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";

describe("loadConfig", () => {
  it("uses the contract's defaults when nothing is set", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080,
      host: "127.0.0.1",
      natsUrl: "nats://127.0.0.1:4222",
      redisUrl: "redis://127.0.0.1:6379",
      clickhouseUrl: undefined,
      dataDir: "./data",
      adminKey: undefined,
      namespace: "pss",
      workers: 1,
      role: "all",
      workerNiceness: 10,
      workerScheduler: "idle",
      jobHeapGrowthPercent: 80,
      metricsPort: null,
    });
  });

  it("reads every variable it documents", () => {
    const c = loadConfig({
      PORT: "9000",
      HOST: "0.0.0.0",
      NATS_URL: "nats://nats:4222",
      REDIS_URL: "redis://cache:6379",
      CLICKHOUSE_URL: "http://ch:8123",
      DATA_DIR: "/var/pss",
      PSS_ADMIN_KEY: "a-long-enough-admin-key",
      PSS_MAX_BODY_BYTES: "2048",
      PSS_MAX_BATCH_LOGS: "10",
      PSS_WORKERS: "2",
      PSS_ROLE: "worker",
      PSS_WORKER_NICENESS: "5",
      PSS_WORKER_SCHEDULER: "normal",
      PSS_JOB_HEAP_GROWTH_PERCENT: "0",
      PSS_METRICS_PORT: "9464",
    });
    expect(c).toMatchObject({ metricsPort: 9464, port: 9000, host: "0.0.0.0", clickhouseUrl: "http://ch:8123", dataDir: "/var/pss", maxBodyBytes: 2048, maxBatchLogs: 10, workers: 2, role: "worker", workerNiceness: 5, workerScheduler: "normal", jobHeapGrowthPercent: 0 });
  });

  it("takes each of PSS_ROLE's values", () => {
    for (const role of ["all", "api", "worker"]) expect(loadConfig({ PSS_ROLE: role }).role).toBe(role);
  });

  it("takes the service's NATS nkey from NATS_NKEY_SEED_FILE, or with PSS_SECURE_NATS=1 from DATA_DIR/nats", () => {
    expect(loadConfig({}).natsNkeySeedFile).toBeUndefined();
    expect(loadConfig({ PSS_SECURE_NATS: "1" }).natsNkeySeedFile).toBe("./data/nats/service.nk");
    expect(loadConfig({ PSS_SECURE_NATS: "1", DATA_DIR: "/var/pss" }).natsNkeySeedFile).toBe("/var/pss/nats/service.nk");
    expect(loadConfig({ PSS_SECURE_NATS: "1", NATS_NKEY_SEED_FILE: "/etc/pss/nats.nk" }).natsNkeySeedFile).toBe("/etc/pss/nats.nk");
  });

  it.each([
    ["PORT", "eighty"],
    ["PORT", "70000"],
    ["NATS_URL", "not a url"],
    ["REDIS_URL", "http://wrong-scheme"],
    ["CLICKHOUSE_URL", "ftp://x"],
    ["PSS_ADMIN_KEY", "short"],
    ["PSS_NAMESPACE", "Has-Caps"],
    ["LOG_LEVEL", "loud"],
    ["PSS_MAX_BATCH_LOGS", "0"],
    ["PSS_JOB_HEAP_GROWTH_PERCENT", "-5"],
    ["PSS_SECURE_NATS", "yes"],
    ["PSS_ROLE", "engine"],
    ["PSS_ROLE", "API"],
    ["PSS_WORKER_NICENESS", "20"],
    ["PSS_WORKER_SCHEDULER", "lowest"],
    ["PSS_METRICS_PORT", "0"],
    ["PSS_METRICS_PORT", "http"],
  ])("refuses a bad %s with a message naming it", (name, value) => {
    let err: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe(name);
    expect((err as Error).message).toMatch(new RegExp(`^${name}: `));
  });
});

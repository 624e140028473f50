import { ConfigError, loadConfig } from "./config.js";
import { createServices } from "./services.js";
import { buildApp } from "./http/app.js";

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const services = await createServices(config);
  const app = await buildApp(services);
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, "shutting down");
    await app.close();
    await services.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  await app.listen({ port: config.port, host: config.host });
  if (!config.adminKey) app.log.warn("PSS_ADMIN_KEY is not set: no bootstrap organization or key was ensured");
}

main().catch((err) => {
  console.error("failed to start:", err instanceof Error ? err.message : err);
  process.exit(1);
});

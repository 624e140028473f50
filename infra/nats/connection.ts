import { connect, type NatsConnection } from "@nats-io/transport-node";

/** Opens the service's NATS connection; reconnects forever so a NATS restart is survived. */
export async function connectNats(url: string, name = "patient-state-service"): Promise<NatsConnection> {
  return connect({
    servers: url,
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    // Big batches travel as one message per patient; keep the client's buffer generous.
    pingInterval: 20_000,
    // Otherwise every request (each JetStream publish, each direct get) builds an Error
    // up front just to keep its stack: measurable on the hot paths.
    noAsyncTraces: true,
  });
}

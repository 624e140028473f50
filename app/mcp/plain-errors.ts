import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

/** What the SDK's McpError puts before its message; a client puts its own before what it receives. */
const SDK_PREFIX = /^MCP error -?\d+: /;

/**
 * Sends JSON-RPC errors with their message alone. The SDK's own errors (a prompt's
 * arguments that do not fit, an unknown prompt or resource) carry "MCP error -32602: "
 * in the message, and clients add the same again, so a user read it twice. Our handlers
 * throw ProtocolError, which has no prefix; this covers the SDK's.
 */
export function sendPlainErrors(transport: Transport): void {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const m = message as { error?: { message?: unknown } };
    if (m.error && typeof m.error.message === "string" && SDK_PREFIX.test(m.error.message)) {
      return send({ ...message, error: { ...m.error, message: m.error.message.replace(SDK_PREFIX, "") } } as typeof message, options);
    }
    return send(message, options);
  };
}

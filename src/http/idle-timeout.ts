import type { FastifyRequest } from "fastify";

/**
 * Lifts the connection's idle timeout (HTTP_IDLE_TIMEOUT_MS, which closes sockets with no bytes
 * moving) while the server works on a request without sending anything, such as completing an
 * upload from its stored parts. Returns the function that puts the timeout back.
 */
export function suspendIdleTimeout(request: FastifyRequest): () => void {
  const socket = request.raw.socket;
  // Injected requests (tests) have a stand-in socket without timers.
  if (typeof socket?.setTimeout !== "function") return () => {};
  const idle = request.server.server.timeout;
  socket.setTimeout(0);
  return () => {
    if (!socket.destroyed) socket.setTimeout(idle);
  };
}

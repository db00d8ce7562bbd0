/**
 * The ceiling for API throughput: a bare Fastify 5 route on the same machine, no auth, no database.
 * Started as a child process by bench/lib.ts; prints its port on stdout.
 */
import Fastify from "fastify";

const app = Fastify({ logger: false });
app.get("/bare", async () => ({ ok: true }));
await app.listen({ port: 0, host: "127.0.0.1" });
const addr = app.server.address();
console.log(`PORT ${typeof addr === "object" && addr ? addr.port : 0}`);

// The memory baseline: a bare HTTP server on 127.0.0.1 under the same runtime
// as serve (Node, or Deno via its node:http), printing one readiness line.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const server = createServer((_req, res) => { res.writeHead(200).end("ok"); });
server.listen(0, "127.0.0.1", () => {
  console.log(JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port }));
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));

// The process-hop baseline of the per-turn rows: a bare WebSocket echo on
// 127.0.0.1 under the same runtime and the same library (`ws`) as serve's
// transport, printing one readiness line. A round trip to it is what one
// extra process hop costs on this machine, nothing of the controller's work.
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";

const server = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
server.on("connection", (socket) => socket.on("message", (data, isBinary) => socket.send(data, { binary: isBinary })));
server.on("listening", () => console.log(JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port })));
process.on("SIGTERM", () => server.close(() => process.exit(0)));

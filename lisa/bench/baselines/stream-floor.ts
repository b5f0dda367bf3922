// The floor of a streamed reply's extra CPU: what any client must do beyond
// the non-streaming path, in a child configured like Lisa's process (V8 sized
// for memory, as src/main.ts). Alternately, one invocation's worth of:
//   streamed: POST chat/completions with `stream: true`, the body read with a
//             bare node:http reader (chunks kept, nothing parsed), then one more
//             Matrix event (the final edit: PUT send) and its /sync echo
//   single:   the same request without streaming, the body read whole
// and prints the mean CPU time (process.cpuUsage, user + system) of each as
// one JSON line: {"streamedMs": .., "singleMs": .., "samples": n}.
// Usage: node bench/baselines/stream-floor.ts '<json StreamFloorOptions>'
import { setFlagsFromString } from "node:v8";
import { Agent, request } from "node:http";

setFlagsFromString("--optimize-for-size");

/** What the bench tells the floor child. */
export interface StreamFloorOptions {
  readonly homeserverUrl: string;
  readonly userId: string;
  readonly password: string;
  readonly roomId: string;
  readonly llmUrl: string;
  readonly samples: number;
  /** Bytes of the final edit's content (Lisa's, measured). */
  readonly editBytes: number;
}

const options = JSON.parse(process.argv[2] ?? "{}") as StreamFloorOptions;
const matrixAgent = new Agent({ keepAlive: true, timeout: 60_000 });
const llmAgent = new Agent({ keepAlive: true, timeout: 60_000 });
const matrixOrigin = new URL(options.homeserverUrl).origin;
const llm = new URL(options.llmUrl);
let token = "";

function call(agent: Agent, origin: string, method: "GET" | "POST" | "PUT", path: string, body?: string): Promise<string> {
  const headers: Record<string, string> = { "x-bench-client": "floor", accept: "application/json" };
  if (token !== "") headers["authorization"] = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  return new Promise((resolve, reject) => {
    const outgoing = request(new URL(path, origin), { agent, method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => ((response.statusCode ?? 0) < 300 ? resolve(Buffer.concat(chunks).toString("utf8")) : reject(new Error(`floor: ${method} -> ${response.statusCode}`))));
      response.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

const matrix = async (method: "GET" | "PUT" | "POST", path: string, body?: unknown): Promise<Record<string, unknown>> =>
  JSON.parse(await call(matrixAgent, matrixOrigin, method, `/_matrix/client/v3${path}`, body === undefined ? undefined : JSON.stringify(body))) as Record<string, unknown>;
const completion = (stream: boolean): Promise<string> =>
  call(llmAgent, llm.origin, "POST", `${llm.pathname}/chat/completions`, JSON.stringify({ model: "test-model", messages: [{ role: "user", content: "x" }], ...(stream ? { stream: true } : {}) }));

const cpuMs = (): number => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

const login = await matrix("POST", "/login", { type: "m.login.password", identifier: { type: "m.id.user", user: options.userId }, password: options.password });
token = String(login["access_token"]);
const filter = encodeURIComponent(JSON.stringify({ room: { timeline: { limit: 10 } } }));
let since = String((await matrix("GET", `/sync?timeout=0&filter=${filter}`))["next_batch"]);
const room = encodeURIComponent(options.roomId);
const edit = { msgtype: "m.text", body: "y".repeat(Math.max(1, options.editBytes - 40)) };
let streamed = 0;
let single = 0;
for (let i = 0; i <= options.samples; i += 1) {
  const a = cpuMs();
  await completion(true);
  await matrix("PUT", `/rooms/${room}/send/m.room.message/floor_${process.pid}_${i}`, edit);
  since = String((await matrix("GET", `/sync?since=${encodeURIComponent(since)}&timeout=30000&filter=${filter}`))["next_batch"]);
  const b = cpuMs();
  await completion(false);
  const c = cpuMs();
  // The first round warms up.
  if (i === 0) continue;
  streamed += b - a;
  single += c - b;
}
process.stdout.write(`${JSON.stringify({ streamedMs: streamed / options.samples, singleMs: single / options.samples, samples: options.samples })}\n`);
matrixAgent.destroy();
llmAgent.destroy();

// Where an idle Lisa's resident set goes: fresh Node processes that load
// Lisa's dependencies one by one (as src/main.ts configures V8), and Node's
// own HTTP client (a keep-alive http.Agent, as under src/http/) after a few
// hundred requests. Each figure is the median of `rounds` processes. These
// are causes, not goals: the rows are reported against bare Node.
import { distribution } from "./lib/stats.ts";
import type { BenchResult } from "./lib/types.ts";
import { spawnNode } from "./lib/world.ts";

/** Options of the footprint benchmark. */
export interface FootprintOptions {
  readonly rounds: number;
}

const MB = 1_000_000;

// The child, plain JavaScript run with `node --input-type=module -e` (a .ts
// child would load Node's TypeScript stripper, itself WebAssembly, into every
// figure). Arguments: [--requests=N] MODULE...; it imports the modules
// (resolved from the package folder), optionally sends N requests through a
// keep-alive node:http Agent to a local server, waits 1 s and prints its
// memory. Every child sets --optimize-for-size as src/main.ts does.
const CHILD = `
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";
setFlagsFromString("--optimize-for-size");
const args = process.argv.slice(1);
const requests = Number(args.find((a) => a.startsWith("--requests="))?.split("=")[1] ?? 0);
const http = createRequire(process.cwd() + "/")("node:http");
for (const name of args.filter((a) => !a.startsWith("--"))) await import(name);
if (requests > 0) {
  const server = http.createServer((q, s) => s.end("{}")).listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const origin = "http://127.0.0.1:" + server.address().port;
  const agent = new http.Agent({ keepAlive: true });
  for (let i = 0; i < requests; i += 1) {
    await new Promise((resolve, reject) => http.get(origin + "/", { agent }, (res) => res.resume().on("end", resolve)).on("error", reject));
  }
  agent.destroy();
  server.close();
}
await new Promise((resolve) => setTimeout(resolve, 1000));
const text = readFileSync("/proc/self/status", "utf8");
const kb = (field) => Number(text.split("\\n").find((line) => line.startsWith(field + ":"))?.split(/ +/)[1] ?? 0) * 1024;
process.stdout.write(JSON.stringify({ rss: kb("VmRSS"), anon: kb("RssAnon"), file: kb("RssFile") }) + String.fromCharCode(10));
`;

interface Footprint {
  readonly rss: number;
  readonly anon: number;
  readonly file: number;
}

async function measure(args: readonly string[], rounds: number): Promise<Footprint> {
  const runs: Footprint[] = [];
  for (let i = 0; i < rounds; i += 1) {
    const child = spawnNode(["--input-type=module", "-e", CHILD, "--", ...args]);
    const code = await child.exited;
    if (code !== 0) throw new Error(`footprint child failed (${code}): ${child.tail()}`);
    runs.push(JSON.parse(child.tail().trim().split("\n").at(-1) ?? "{}") as Footprint);
  }
  const median = (pick: (f: Footprint) => number): number => distribution(runs.map(pick)).median;
  return { rss: median((f) => f.rss), anon: median((f) => f.anon), file: median((f) => f.file) };
}

const STEPS: readonly { readonly label: string; readonly args: readonly string[] }[] = [
  { label: "+ node:http keep-alive client, 300 requests", args: ["--requests=300"] },
  { label: "+ valibot", args: ["valibot"] },
  { label: "+ pino", args: ["pino"] },
  { label: "+ smol-toml", args: ["smol-toml"] },
  { label: "+ node:sqlite", args: ["node:sqlite"] },
  { label: "+ markdown-it (answer stack)", args: ["markdown-it"] },
  { label: "+ sanitize-html (answer stack)", args: ["sanitize-html"] },
  { label: "+ parse5 (answer stack)", args: ["parse5"] },
  { label: "all of the above, 300 requests", args: ["valibot", "pino", "smol-toml", "node:sqlite", "markdown-it", "sanitize-html", "parse5", "--requests=300"] },
];

/** Runs the benchmark. */
export async function benchFootprint(options: FootprintOptions): Promise<BenchResult> {
  const bare = await measure([], options.rounds);
  const show = (f: Footprint): string => `${(f.rss / MB).toFixed(1)} MB (anon ${(f.anon / MB).toFixed(1)}, file ${(f.file / MB).toFixed(1)})`;
  const rows = [];
  for (const step of STEPS) {
    const measured = await measure(step.args, options.rounds);
    rows.push({
      figure: `footprint: bare Node ${step.label}`, value: `${show(measured)}; +${((measured.rss - bare.rss) / MB).toFixed(1)} MB`,
      baseline: `bare Node ${(bare.rss / MB).toFixed(1)} MB`, ratio: measured.rss / bare.rss, goal: "(cause, no goal)", met: true,
    });
  }
  return {
    rows,
    notes: [
      `footprint: median of ${options.rounds} fresh processes per row, RSS 1 s after the imports (and requests); file = pages of the node binary and libraries`,
      "footprint: the rows overlap (shared Node internals), so they do not add up to the last row",
    ],
  };
}

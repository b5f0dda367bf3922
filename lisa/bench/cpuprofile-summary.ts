// Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time by owner
// (our src/ files, each node_modules package, Node internals, GC, idle) and
// the hottest functions. A diagnosis aid for bench results, not a benchmark.
// Usage: node bench/cpuprofile-summary.ts FILE.cpuprofile [top=25]
import { readFileSync } from "node:fs";

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Who owns a call frame: "src/<dir>", "pkg:<name>", "node", or a V8 pseudo-frame. */
export function owner(url: string, functionName: string): string {
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg?.[1] !== undefined) return `pkg:${pkg[1]}`;
  const ours = /\/(?:src|dist)\/([^/]+)\//.exec(url) ?? /\/(?:src|dist)\/([^/]+\.(?:ts|js))$/.exec(url);
  if (ours?.[1] !== undefined) return `src/${ours[1]}`;
  if (url.startsWith("node:") || !url.includes("/")) return "node";
  return url.includes("/test/") ? "test-support" : "other";
}

function main(): void {
  const file = process.argv[2];
  if (file === undefined) throw new Error("usage: cpuprofile-summary.ts FILE.cpuprofile [top]");
  const top = Number(process.argv[3] ?? 25);
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const owners = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const micros = profile.timeDeltas[i] ?? 0;
    if (node === undefined) return;
    const { functionName, url, lineNumber } = node.callFrame;
    total += micros;
    const who = owner(url, functionName);
    owners.set(who, (owners.get(who) ?? 0) + micros);
    const name = `${functionName || "(anonymous)"} ${url.replace(/^.*\/(src|dist|node_modules)\//, "$1/")}:${lineNumber + 1}`;
    functions.set(name, (functions.get(name) ?? 0) + micros);
  });
  const busy = total - (owners.get("(idle)") ?? 0);
  const line = (label: string, micros: number): string =>
    `${(micros / 1000).toFixed(1).padStart(9)} ms ${((100 * micros) / busy).toFixed(1).padStart(5)}%  ${label}`;
  process.stdout.write(`profile ${(total / 1e6).toFixed(2)} s, busy ${(busy / 1000).toFixed(0)} ms (percent of busy)\n\nby owner:\n`);
  for (const [who, micros] of [...owners].sort((a, b) => b[1] - a[1])) if (who !== "(idle)") process.stdout.write(`${line(who, micros)}\n`);
  process.stdout.write(`\ntop ${top} functions (self time):\n`);
  for (const [name, micros] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    if (!name.startsWith("(idle)")) process.stdout.write(`${line(name, micros)}\n`);
  }
}

main();

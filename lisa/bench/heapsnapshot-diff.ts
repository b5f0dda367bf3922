// Compares two V8 heap snapshots of one process (from the memory probe of
// bench/e2ee.ts, LISA_BENCH_PROBE_SNAPSHOTS): the reachable objects' self
// size and count by kind (constructor or V8 type), the kinds that grew most
// first. A diagnosis aid for bench results, not a benchmark.
// Usage: node --max-old-space-size=4000 bench/heapsnapshot-diff.ts EARLIER.heapsnapshot LATER.heapsnapshot [top=40]
import { readFileSync } from "node:fs";

interface Snapshot {
  readonly snapshot: { readonly meta: { readonly node_fields: readonly string[]; readonly node_types: readonly [readonly string[], ...unknown[]] } };
  readonly nodes: readonly number[];
  readonly strings: readonly string[];
}

interface Kind {
  count: number;
  size: number;
}

/** Self size and count of the snapshot's objects by kind (strings, code and numbers each as one kind). */
export function byKind(snapshot: Snapshot): Map<string, Kind> {
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = [fields.indexOf("type"), fields.indexOf("name"), fields.indexOf("self_size")];
  const kinds = new Map<string, Kind>();
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const type = types[snapshot.nodes[i + typeAt] ?? 0] ?? "?";
    const name = snapshot.strings[snapshot.nodes[i + nameAt] ?? 0] ?? "";
    const kind = type.endsWith("string") ? "(string)" : type === "code" ? "(code)" : type === "number" ? "(number)"
      : type === "closure" ? `closure ${name.slice(0, 40)}` : `${type} ${name.slice(0, 60)}`;
    const entry = kinds.get(kind) ?? { count: 0, size: 0 };
    entry.count += 1;
    entry.size += snapshot.nodes[i + sizeAt] ?? 0;
    kinds.set(kind, entry);
  }
  return kinds;
}

function main(): void {
  const [earlierPath, laterPath, topText] = process.argv.slice(2);
  if (earlierPath === undefined || laterPath === undefined) throw new Error("usage: heapsnapshot-diff.ts EARLIER LATER [top]");
  const read = (path: string): Map<string, Kind> => byKind(JSON.parse(readFileSync(path, "utf8")) as Snapshot);
  const [earlier, later] = [read(earlierPath), read(laterPath)];
  const rows: { kind: string; size: number; count: number; total: number }[] = [];
  for (const kind of new Set([...earlier.keys(), ...later.keys()])) {
    const a = earlier.get(kind) ?? { count: 0, size: 0 };
    const b = later.get(kind) ?? { count: 0, size: 0 };
    rows.push({ kind, size: b.size - a.size, count: b.count - a.count, total: b.count });
  }
  rows.sort((x, y) => Math.abs(y.size) - Math.abs(x.size));
  const total = rows.reduce((sum, row) => sum + row.size, 0);
  const code = rows.find((row) => row.kind === "(code)")?.size ?? 0;
  console.log(`self size change ${(total / 1e6).toFixed(2)} MB (compiled code ${(code / 1e6).toFixed(2)} MB of it)`);
  console.log("bytes\tcount change\tcount\tkind");
  for (const row of rows.slice(0, Number(topText ?? 40))) console.log(`${row.size}\t${row.count}\t${row.total}\t${row.kind}`);
}

main();

// Preloaded into serve by bench/turn-path.ts (COUNT=1), never by serve itself:
// counts each node:sqlite statement call by its SQL text with its wall time,
// and JSON.stringify/parse calls, from SIGUSR2 on; written to AIC_COUNT_OUT on exit.
import { writeFileSync } from "node:fs";
import { DatabaseSync, StatementSync } from "node:sqlite";

let armed = false;
const calls: Record<string, number> = {};
const ns: Record<string, number> = {};
const json = { stringify: 0, parse: 0 };
const note = (key: string, started: bigint): void => {
  if (!armed) return;
  calls[key] = (calls[key] ?? 0) + 1;
  ns[key] = (ns[key] ?? 0) + Number(process.hrtime.bigint() - started);
};
const label = (method: string, sql: string): string => `${method} ${sql.replace(/\s+/g, " ").slice(0, 110)}`;

type Method = (this: StatementSync, ...args: unknown[]) => unknown;
const statement = StatementSync.prototype as unknown as Record<"run" | "get" | "all", Method>;
for (const method of ["run", "get", "all"] as const) {
  const original = statement[method];
  statement[method] = function (this: StatementSync, ...args: unknown[]) {
    const started = process.hrtime.bigint();
    try { return original.apply(this, args); } finally { note(label(method, this.sourceSQL), started); }
  };
}
const iterate = (StatementSync.prototype as unknown as { iterate: Method }).iterate;
(StatementSync.prototype as unknown as { iterate: Method }).iterate = function (this: StatementSync, ...args: unknown[]) {
  const key = label("iterate", this.sourceSQL);
  const started = process.hrtime.bigint();
  const it = iterate.apply(this, args) as Iterator<unknown> & Iterable<unknown>;
  note(key, started);
  const next = it.next.bind(it);
  it.next = () => {
    const step = process.hrtime.bigint();
    try { return next(); } finally { if (armed) ns[key] = (ns[key] ?? 0) + Number(process.hrtime.bigint() - step); }
  };
  return it;
};
const exec = DatabaseSync.prototype.exec;
DatabaseSync.prototype.exec = function (this: DatabaseSync, sql: string) {
  const started = process.hrtime.bigint();
  try { exec.call(this, sql); } finally { note(label("exec", sql), started); }
};
const stringify = JSON.stringify;
const parse = JSON.parse;
JSON.stringify = function (...args: Parameters<typeof stringify>) { if (armed) json.stringify += 1; return stringify(...args); } as typeof stringify;
JSON.parse = function (...args: Parameters<typeof parse>) { if (armed) json.parse += 1; return parse(...args); } as typeof parse;
process.on("SIGUSR2", () => { armed = true; });
process.on("exit", () => {
  const out = process.env.AIC_COUNT_OUT;
  if (out !== undefined) writeFileSync(out, stringify({ calls, ns, json }));
});

// The crypto store's own cost: a real OlmMachine decrypting N Megolm
// messages on Lisa's store (in-memory IndexedDB mirrored into the encrypted
// SQLite file) against the same machine on the in-memory IndexedDB alone.
// Each mode runs in its own process; the sender is a second OlmMachine on the
// wasm's memory store in the same process (the same in both modes).
//   node bench/e2ee-store.ts [--messages=N]   (default 1,000, at most 10,000)
// Prints one Markdown table. Reports only; nothing here is asserted.

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Secret } from "../src/config/secret.ts";
import { installIndexedDb } from "../src/e2ee/library.ts";
import { cryptoStorePathFor, openCryptoStore } from "../src/e2ee/store.ts";
import { acquireInstanceLock } from "../src/state/lock.ts";
import { olmPair } from "./lib/olm-pair.ts";
import { quantile } from "./lib/stats.ts";

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
const messages = Math.min(10_000, Math.max(100, Number(flag("messages") ?? 1_000) || 1_000));
const mib = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;

interface Sample { readonly rss: number; readonly heap: number; readonly external: number }
interface ChildReport {
  readonly mode: string;
  readonly openMs: number;
  readonly afterInit: Sample;
  readonly after100: Sample;
  readonly afterAll: Sample;
  readonly decryptMedianMs: number;
  readonly fileBytes: number;
}

function sample(): Sample {
  const usage = process.memoryUsage();
  return { rss: mib(usage.rss), heap: mib(usage.heapUsed), external: mib(usage.external) };
}

async function child(mode: string): Promise<ChildReport> {
  const dir = mkdtempSync(join(tmpdir(), "lisa-bench-e2ee-"));
  try {
    const dbPath = join(dir, "state.db");
    const started = performance.now();
    let storeName: string | undefined;
    let close = (): void => {};
    if (mode === "file") {
      const lock = acquireInstanceLock(dbPath);
      if (!lock.ok) throw lock.error;
      const store = await openCryptoStore(lock.value, dbPath, new Secret("bench", "bench passphrase"));
      if (!store.ok) throw store.error;
      storeName = store.value.storeName;
      close = () => {
        store.value.close();
        lock.value.release();
      };
    } else {
      installIndexedDb();
      storeName = "lisa-crypto";
    }
    const sdk = await import("@matrix-org/matrix-sdk-crypto-wasm");
    await sdk.initAsync();
    const receiver = await sdk.OlmMachine.initialize(new sdk.UserId("@lisa:bench"), new sdk.DeviceId("LISA"), storeName);
    const openMs = performance.now() - started;
    const sender = await sdk.OlmMachine.initialize(new sdk.UserId("@alice:bench"), new sdk.DeviceId("ALICE"));
    const pair = await olmPair(sdk, receiver, sender, "!room:bench");
    global.gc?.();
    const afterInit = sample();
    let after100 = afterInit;
    const times: number[] = [];
    for (let i = 1; i <= messages; i += 1) {
      const sent = await pair.send(`message ${i}`);
      const t0 = performance.now();
      const plain = await sent.decrypt();
      times.push(performance.now() - t0);
      if (!plain.includes(`message ${i}"`)) throw new Error("decrypted the wrong text");
      if (i === 100) {
        global.gc?.();
        after100 = sample();
      }
    }
    global.gc?.();
    const afterAll = sample();
    receiver.close();
    sender.close();
    close();
    const fileBytes = mode === "file" ? statSync(cryptoStorePathFor(dbPath)).size : 0;
    return { mode, openMs: Math.round(openMs), afterInit, after100, afterAll, decryptMedianMs: Math.round(quantile(times, 0.5) * 100) / 100, fileBytes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const childMode = flag("child");
if (childMode !== undefined) {
  console.log(JSON.stringify(await child(childMode)));
} else {
  const reports = ["memory", "file"].map((mode) => {
    const out = execFileSync(process.execPath, ["--expose-gc", import.meta.filename, `--child=${mode}`, `--messages=${messages}`], { encoding: "utf8", maxBuffer: 1 << 20 });
    return JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as ChildReport;
  });
  console.log(`| store (${messages} decrypts) | open + initialize ms | RSS / heap / external MiB after init | after 100 | after ${messages} | decrypt median ms | file bytes |`);
  console.log("| --- | --- | --- | --- | --- | --- | --- |");
  for (const r of reports) {
    const cell = (s: Sample): string => `${s.rss} / ${s.heap} / ${s.external}`;
    console.log(`| ${r.mode === "file" ? "in-memory IndexedDB + encrypted SQLite mirror" : "in-memory IndexedDB only"} | ${r.openMs} | ${cell(r.afterInit)} | ${cell(r.after100)} | ${cell(r.afterAll)} | ${r.decryptMedianMs} | ${r.fileBytes} |`);
  }
}

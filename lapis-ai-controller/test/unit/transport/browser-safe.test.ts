// The SDK files ship to browsers: they use only the WHATWG WebSocket and
// WebCrypto, never Node globals or built-ins (plan 4.6; ws-client imports
// only frames.ts and domain, enforced by the architecture check).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { test } from "node:test";

const ROOT = resolve(import.meta.dirname, "../../..");
const SDK_FILES = [
  "src/client.ts",
  "src/runtime.ts",
  "src/contracts.ts",
  "src/transport/ws-client.ts",
  "src/transport/frames.ts",
  "src/domain/canonical-json.ts",
];

test("AIC-SDK-01 the SDK sources are browser-safe: no node: imports, Buffer, process or require", () => {
  for (const file of SDK_FILES) {
    const code = readFileSync(resolve(ROOT, file), "utf8").split("\n").filter((l) => !/^\s*(\/\/|\*|\/\*)/.test(l)).join("\n");
    for (const banned of [/from "node:/, /\bBuffer\b/, /\bprocess\./, /\brequire\(/, /from "ws"/, /\bDeno\./]) {
      assert.ok(!banned.test(code), `${file} uses ${banned}`);
    }
  }
});

test("AIC-SDK-01 P-DNO-01 the one place the SDK reaches for `ws` is a dynamic import in ws-client.ts's Deno-only socket, never a static import", () => {
  for (const file of SDK_FILES) {
    const code = readFileSync(resolve(ROOT, file), "utf8");
    const dynamic = [...code.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1]);
    assert.deepEqual(dynamic, file === "src/transport/ws-client.ts" ? ["ws"] : [], file);
  }
  const wsClient = readFileSync(resolve(ROOT, "src/transport/ws-client.ts"), "utf8");
  assert.match(wsClient, /runsOnDeno\(\) \? nodeNetSocket\(url\) : new WebSocket\(url\)/);
});

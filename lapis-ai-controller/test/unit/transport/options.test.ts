// Every protocol limit is configurable, validated and capped in code; the
// config sections fail with a key path only.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { startService } from "../../../src/service.ts";
import { MAX_FRAME_BYTES_CEILING } from "../../../src/transport/frames.ts";
import { transportLimits } from "../../../src/transport/options.ts";
import { protocolConfig } from "../../../src/transport/protocol-config.ts";
import { tempDir } from "../../support/temp.ts";

test("AIC-WIRE-04 transport limits: defaults, bounds and the hard frame ceiling", () => {
  const d = transportLimits({});
  assert.ok(d.ok);
  assert.equal(d.value.host, "127.0.0.1");
  assert.equal(d.value.maxFrameBytes, 1024 * 1024);
  assert.ok(transportLimits({ maxFrameBytes: MAX_FRAME_BYTES_CEILING }).ok);
  for (const bad of [{ maxFrameBytes: MAX_FRAME_BYTES_CEILING + 1 }, { maxFrameBytes: 10 }, { sessionTtlMs: 0 }, { port: 70000 },
    { helloTimeoutMs: 1.5 }, { snapshotTailLimit: 5000 }, { nope: 1 }, { host: "a b" }]) {
    const r = transportLimits(bad);
    assert.ok(!r.ok && r.error.code === "config_invalid", JSON.stringify(bad));
  }
});

test("AIC-WIRE-05 protocol config: listen, limits.protocol and tokens fail config_invalid naming the key", () => {
  const env = () => "config-token-0123456789abcdef";
  const cases: [Record<string, unknown>, string][] = [
    [{ listen: { port: "x" } }, "config.listen.port"],
    [{ listen: { path: "/x" } }, "config.listen.path"],
    [{ listen: [] }, "config.listen"],
    [{ limits: { protocol: { port: 1 } } }, "config.limits.protocol.port"],
    [{ limits: { protocol: { maxFrameBytes: 1 } } }, "config.limits.protocol.maxFrameBytes"],
    [{ tokens: {} }, "config.tokens"],
  ];
  for (const [sections, where] of cases) {
    const r = protocolConfig(sections as never, env);
    assert.ok(!r.ok, where);
    assert.equal(r.error.code, "config_invalid");
    assert.equal(r.error.where, where);
  }
  const good = protocolConfig({ tokens: [{ id: "a", token: "env:X" }], listen: { port: 0 }, limits: { protocol: { maxFrameBytes: 4096 } } }, env);
  assert.ok(good.ok && good.value.enabled && good.value.limits.maxFrameBytes === 4096 && good.value.limits.port === 0);
});

test("AIC-WIRE-05 service: config limits.volatile reaches the store's validation; the listener binds 127.0.0.1 only", async (t) => {
  const dir = tempDir(t);
  const bad = await startService({ databasePath: join(dir, "a.sqlite"), retention: "full", sections: { limits: { volatile: { maxEntries: 0 } } } });
  assert.ok(!bad.ok && bad.error.code === "config_invalid");
  const started = await startService({
    databasePath: join(dir, "b.sqlite"),
    retention: "full",
    sections: { tokens: [{ id: "a", token: "env:X" }], listen: { port: 0 }, limits: { volatile: { maxEntries: 10 } } },
    env: () => "config-token-0123456789abcdef",
  });
  assert.ok(started.ok);
  t.after(() => started.value.stop());
  assert.match(String(started.value.readiness.url), /^ws:\/\/127\.0\.0\.1:\d+$/);
});

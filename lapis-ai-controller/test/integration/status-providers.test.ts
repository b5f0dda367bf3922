// status --json shows each provider's launch source and package version (the
// installed codex-acp through the acpx registry) and the redaction table
// digest, never a secret or an argv. P-PRV-01, P-CAP-08.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { detectorTableDigest } from "../../src/capture/secret-detectors.ts";
import { tempDir } from "../support/temp.ts";

const PACKAGE = resolve(import.meta.dirname, "../..");
const CANARY = "CANARYtok-status-8e1f0c2b7a9d4356";

test("P-PRV-01 P-CAP-08 status --json: codex launch source installed with the package version, detector digest, no secret", (t) => {
  const dir = tempDir(t, "aic-status-");
  const config = {
    version: 1,
    tokens: [{ id: "a", token: "env:AIC_STATUS_TOKEN", principal: "p", application: "app" }],
    workspaces: { ws: dir },
    providers: {
      codex: { agent: "codex", mode: "read-only", envAllowlist: ["CODEX_HOME"] },
      custom: { command: ["/usr/bin/env", `SECRET=${CANARY}`, "true"] },
      native: { kind: "codex-app-server" },
    },
  };
  const configPath = join(dir, "config.json");
  writeFileSync(configPath, JSON.stringify(config), { mode: 0o600 });
  const r = spawnSync(join(PACKAGE, "node_modules/.bin/node"), [join(PACKAGE, "src/main.ts"), "status", "--json", "--config", configPath, "--workspace", join(dir, "w")], {
    env: { HOME: dir, PATH: process.env.PATH ?? "/usr/bin:/bin", AIC_STATUS_TOKEN: CANARY }, encoding: "utf8", timeout: 30_000,
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.includes(CANARY), false, "no token or argv secret in status");
  const report = JSON.parse(r.stdout) as { providers: { id: string; launch: Record<string, unknown> }[]; redaction: Record<string, unknown> };
  const codex = report.providers.find((p) => p.id === "codex");
  assert.deepEqual(codex?.launch, { source: "installed", packageName: "@agentclientprotocol/codex-acp", packageVersion: "1.13.1" });
  assert.deepEqual(report.providers.find((p) => p.id === "custom")?.launch, { source: "configured", packageName: null, packageVersion: null });
  // A native provider reports the installed Codex it would run.
  const native = report.providers.find((p) => p.id === "native") as { kind?: string; launch: Record<string, unknown> } | undefined;
  assert.equal(native?.kind, "codex-app-server");
  assert.deepEqual(native?.launch, { source: "installed", packageName: "@openai/codex", packageVersion: "0.156.1" });
  assert.equal(report.redaction.digest, detectorTableDigest());
  assert.equal(report.redaction.scanner, "pinned-secret-scanner");
});

// Issue 32.1: the demo's children keep the user's TLS, proxy, npm and pip
// settings for their installs (a company proxy with its own CA works as in
// the user's shell), servers get no proxy, and nothing else crosses.
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { installEnvironment, runtimeEnvironment } from "../../../scripts/demo/env.ts";
import { writeCodexHome } from "../../../scripts/demo/model.ts";
import { tempDir } from "../../support/temp.ts";

const user: NodeJS.ProcessEnv = {
  PATH: "/opt/bin:/usr/bin",
  LANG: "C.UTF-8",
  NODE_EXTRA_CA_CERTS: "/etc/company/ca.pem",
  SSL_CERT_FILE: "/etc/company/bundle.pem",
  SSL_CERT_DIR: "/etc/company/certs",
  HTTPS_PROXY: "http://proxy.invalid:3128",
  https_proxy: "http://proxy.invalid:3128",
  NO_PROXY: "localhost,127.0.0.1",
  npm_config_registry: "https://mirror.invalid/npm/",
  npm_config_cache: "/home/u/.npm",
  PIP_INDEX_URL: "https://mirror.invalid/pypi/simple",
  OPENAI_API_KEY: "sk-canary-never-passed",
  GITHUB_TOKEN: "ghp-canary-never-passed",
};

test("AIC-DEMO-01 install steps keep the user's CA bundles, proxies, npm and pip settings", () => {
  const env = installEnvironment(user, { HOME: "/demo/home" });
  for (const key of ["PATH", "LANG", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "npm_config_registry", "npm_config_cache", "PIP_INDEX_URL"]) {
    assert.equal(env[key], user[key], key);
  }
  assert.equal(env.HOME, "/demo/home");
});

test("AIC-DEMO-01 nothing else of the user's environment reaches a demo child", () => {
  for (const env of [installEnvironment(user), runtimeEnvironment(user)]) {
    assert.equal(env.OPENAI_API_KEY, undefined);
    assert.equal(env.GITHUB_TOKEN, undefined);
    assert.ok(!JSON.stringify(env).includes("canary"));
  }
});

test("AIC-DEMO-01 servers and the chat get no proxy (their traffic is loopback) and a PATH even when unset", () => {
  const env = runtimeEnvironment(user, { X: "1" });
  assert.deepEqual(Object.keys(env).sort(), ["LANG", "PATH", "X"]);
  assert.equal(runtimeEnvironment({}).PATH, "/usr/bin:/bin");
});

test("P-NET-02 the demo's CODEX_HOME turns Codex's plugin marketplace sync off, for a local and a remote model", (t) => {
  for (const local of [true, false]) {
    const codexHome = join(tempDir(t), "codex-home");
    writeCodexHome(codexHome, { baseUrl: "http://127.0.0.1:9/v1", model: "smollm2", keyEnv: local ? null : "OPENAI_API_KEY", contextWindow: null, local });
    const toml = readFileSync(join(codexHome, "config.toml"), "utf8");
    assert.match(toml, /^\[features\]\nplugins = false$/m);
    assert.ok(!toml.includes("sk-"), "no key in the file, only the variable's name");
  }
});

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { compileCacheDirectory } from "../../../src/cli/compile-cache.ts";

describe("compile cache folder", () => {
  test("uses systemd's CacheDirectory when the service unit provides one", () => {
    assert.equal(compileCacheDirectory({ CACHE_DIRECTORY: "/var/cache/lisa" }, "/home/lisa"), "/var/cache/lisa/compile-cache");
    assert.equal(compileCacheDirectory({ CACHE_DIRECTORY: "/var/cache/lisa:/var/cache/other" }, null), "/var/cache/lisa/compile-cache");
  });

  test("keeps the operator's NODE_COMPILE_CACHE", () => {
    assert.equal(compileCacheDirectory({ NODE_COMPILE_CACHE: "/srv/cc", CACHE_DIRECTORY: "/var/cache/lisa" }, "/home/lisa"), "/srv/cc");
  });

  test("falls back to the user's private cache folder, never the shared temp folder", () => {
    assert.equal(compileCacheDirectory({ XDG_CACHE_HOME: "/home/ann/.xdg-cache" }, "/home/ann"), "/home/ann/.xdg-cache/lisa/compile-cache");
    assert.equal(compileCacheDirectory({}, "/home/ann"), "/home/ann/.cache/lisa/compile-cache");
    assert.equal(compileCacheDirectory({ XDG_CACHE_HOME: "relative" }, "/home/ann"), "/home/ann/.cache/lisa/compile-cache");
  });

  test("runs without a cache when disabled or when no private folder is known", () => {
    assert.equal(compileCacheDirectory({ NODE_DISABLE_COMPILE_CACHE: "1", CACHE_DIRECTORY: "/var/cache/lisa" }, "/home/ann"), null);
    assert.equal(compileCacheDirectory({}, null), null);
    assert.equal(compileCacheDirectory({}, ""), null);
  });
});

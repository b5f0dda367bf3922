// LISA-XSIGN-09: `lisa e2ee` on the command line: export, restore and reset
// of her identity; a reset without `--yes-break-trust` is a usage error
// (exit 2) that changes nothing; the recovery key is never an argument: it is
// read as one bounded line from stdin (or an env: reference).
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import { parseCommand, USAGE } from "../../../src/cli/args.ts";
import { readSecretLine } from "../../../src/cli/e2ee.ts";
import { runCli } from "../../../src/cli/main.ts";

describe("LISA-XSIGN-09: lisa e2ee on the command line", () => {
  test("LISA-XSIGN-09: the three actions parse with --config; the usage names them", () => {
    for (const action of ["export-recovery", "restore"] as const) {
      assert.deepEqual(parseCommand(["e2ee", action, "--config", "c.toml"]), { kind: "e2ee", action, configPath: "c.toml" });
    }
    assert.deepEqual(parseCommand(["e2ee", "reset-identity", "--config", "c.toml", "--yes-break-trust"]),
      { kind: "e2ee", action: "reset-identity", configPath: "c.toml" });
    for (const action of ["export-recovery", "restore", "reset-identity"]) assert.ok(USAGE.includes(`lisa e2ee ${action} --config PATH`));
    assert.ok(USAGE.includes("--yes-break-trust"));
  });

  test("LISA-XSIGN-09: a reset without --yes-break-trust is refused with exit 2 before anything is read", async () => {
    const refused = parseCommand(["e2ee", "reset-identity", "--config", "c.toml"]);
    assert.equal(refused.kind, "usage_error");
    assert.match(refused.kind === "usage_error" ? refused.message : "", /--yes-break-trust/);
    const lines: string[] = [];
    const status = await runCli(["e2ee", "reset-identity", "--config", "/nonexistent/c.toml"], { out: (l) => lines.push(l), err: (l) => lines.push(l) });
    assert.equal(status, 2);
    assert.ok(lines.some((l) => l.includes("breaks every member's trust")));
  });

  test("LISA-XSIGN-09: other mistakes are usage errors too: no action, an unknown one, an extra argument, a key as argument, a flag elsewhere", () => {
    for (const argv of [
      ["e2ee", "--config", "c.toml"], ["e2ee", "forget", "--config", "c.toml"], ["e2ee", "restore", "EsTc LRcB", "--config", "c.toml"],
      ["e2ee", "restore", "--config", "c.toml", "--yes-break-trust"], ["e2ee", "export-recovery"], ["run", "--config", "c.toml", "--yes-break-trust"],
      ["e2ee", "restore", "--config", "c.toml", "--recovery-key", "x"],
    ]) {
      assert.equal(parseCommand(argv).kind, "usage_error", argv.join(" "));
    }
  });

  test("LISA-XSIGN-09: the recovery key is read as one line from stdin, bounded", async () => {
    const one = new PassThrough();
    const reading = readSecretLine(one);
    one.write("  abcd efgh \nsecond line");
    assert.equal(await reading, "abcd efgh");
    const ended = new PassThrough();
    const atEnd = readSecretLine(ended);
    ended.end("abcd");
    assert.equal(await atEnd, "abcd");
    const empty = new PassThrough();
    const none = readSecretLine(empty);
    empty.end();
    assert.equal(await none, null);
    const long = new PassThrough();
    const tooLong = readSecretLine(long, { bytes: 16, ms: 5_000 });
    long.write("x".repeat(17));
    assert.equal(await tooLong, null);
    const slow = new PassThrough();
    assert.equal(await readSecretLine(slow, { bytes: 16, ms: 20 }), null);
  });
});

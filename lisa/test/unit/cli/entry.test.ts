// Issue 26 point 4: the `lisa` entry's Node version guard, and line output
// that survives a closed pipe.

import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { describe, test } from "node:test";
import { nodeVersionProblem, REQUIRED_NODE_MAJOR } from "../../../src/cli/node-version.ts";
import { guardedWriter, type WriteTarget } from "../../../src/cli/output.ts";

describe("LISA-CLI-01: the Node version guard", () => {
  test("accepts Node 24 and newer", () => {
    assert.equal(REQUIRED_NODE_MAJOR, 24);
    for (const version of ["v24.0.0", "v24.21.0", "v25.1.0", "v100.0.0"]) assert.equal(nodeVersionProblem(version), null, version);
  });

  test("says in one line what Lisa needs on an older or unreadable version", () => {
    assert.equal(nodeVersionProblem("v20.20.2"), "lisa: needs Node.js 24 or newer, but this is Node.js v20.20.2");
    for (const version of ["v23.11.1", "v18.0.0", "v4.9.1", "", "garbage", "v2x.0.0"]) {
      const problem = nodeVersionProblem(version);
      assert.ok(problem !== null, version);
      assert.ok(!problem.includes("\n"), "one line");
      assert.match(problem, /^lisa: needs Node\.js 24 or newer/);
    }
  });
});

class FakeStream extends EventEmitter implements WriteTarget {
  readonly written: string[] = [];
  throwOnWrite = false;
  write(chunk: string): boolean {
    if (this.throwOnWrite) throw new Error("write after end");
    this.written.push(chunk);
    return true;
  }
}

describe("LISA-CLI-01: output survives a closed pipe", () => {
  test("writes lines until the stream reports an error, then drops the rest without throwing", () => {
    const stream = new FakeStream();
    const write = guardedWriter(stream);
    write("first");
    stream.emit("error", Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
    write("second");
    assert.deepEqual(stream.written, ["first\n"]);
  });

  test("a write that throws silences the stream too", () => {
    const stream = new FakeStream();
    const write = guardedWriter(stream);
    stream.throwOnWrite = true;
    write("lost");
    stream.throwOnWrite = false;
    write("also dropped");
    assert.deepEqual(stream.written, []);
  });

  test("listens for errors from the first write on, so an emitted EPIPE is never unhandled", () => {
    const stream = new FakeStream();
    const write = guardedWriter(stream);
    assert.equal(stream.listenerCount("error"), 0, "nothing is attached before the command writes");
    write("line");
    assert.equal(stream.listenerCount("error"), 1);
    write("line");
    assert.equal(stream.listenerCount("error"), 1, "one listener, however many lines");
  });
});

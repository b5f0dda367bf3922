// P-DNO-01 under Deno: the SDK's default socket is the `ws` package's
// over node:net (TCP_NODELAY, one writev a frame), not Deno's own WebSocket
// client, which leaves Nagle on and writes a frame of about 1 KiB or more as
// header and payload apart: there each answer took two reads, the payload held
// back for the controller's delayed ACK (40 ms on Linux). Counted, not timed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { runsOnDeno } from "../../src/transport/ws-client.ts";
import { readsPerLargeAnswer } from "../support/frame-reads-check.ts";

test("P-DNO-01 under Deno the default socket delivers each 4 KiB answer in one read", async () => {
  assert.equal(runsOnDeno(), true);
  assert.deepEqual(await readsPerLargeAnswer(5), [1, 1, 1, 1, 1]);
});

// JSON-RPC frame decoding: total (never throws) and strict about shapes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeFrame, encodeRawResult, encodeResult, utf8Length } from "../../../src/transport/frames.ts";

test("AIC-WIRE-02 decodeFrame classifies requests, notifications, results, errors and invalid frames", () => {
  assert.equal(decodeFrame('{"jsonrpc":"2.0","id":1,"method":"a.b","params":{}}').kind, "request");
  assert.equal(decodeFrame('{"jsonrpc":"2.0","method":"event","params":{"x":1}}').kind, "notification");
  assert.equal(decodeFrame('{"jsonrpc":"2.0","id":"s1","result":null}').kind, "result");
  assert.equal(decodeFrame('{"jsonrpc":"2.0","id":"s1","error":{"code":-32000,"message":"x","data":{"code":"x","retryable":true}}}').kind, "error");
  const cases: [string, string][] = [
    ["{", "parse_error"],
    ["[]", "invalid_request"],
    ['{"jsonrpc":"1.0","id":1,"method":"a"}', "invalid_request"],
    ['{"jsonrpc":"2.0","id":{},"method":"a"}', "invalid_request"],
    ['{"jsonrpc":"2.0","id":1,"method":""}', "invalid_request"],
    ['{"jsonrpc":"2.0","id":1,"method":"a","params":[1]}', "invalid_params"],
    ['{"jsonrpc":"2.0","id":1}', "invalid_request"],
  ];
  for (const [text, code] of cases) {
    const frame = decodeFrame(text);
    assert.equal(frame.kind, "invalid", text);
    if (frame.kind === "invalid") assert.equal(frame.error.data.code, code, text);
  }
});

test("P-API-07 a raw result keeps the stored receipt bytes exactly", () => {
  const receipt = '{"commandId":"c","threadId":"t"}';
  assert.equal(encodeRawResult(7, receipt), `{"jsonrpc":"2.0","id":7,"result":${receipt}}`);
  assert.equal(encodeResult("x", undefined), '{"jsonrpc":"2.0","id":"x","result":null}');
});

test("AIC-WIRE-04 utf8Length counts bytes as the socket sends them", () => {
  for (const text of ["abc", "é", "€", "😀", "a😀é"]) assert.equal(utf8Length(text), Buffer.byteLength(text, "utf8"), text);
});

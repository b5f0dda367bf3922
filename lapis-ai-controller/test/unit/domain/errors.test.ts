import assert from "node:assert/strict";
import { test } from "node:test";
import { controllerError, ControllerFailure, ERROR_CODE_PATTERN, ERROR_CODES, failureOf, isErrorCode } from "../../../src/domain/errors.ts";

test("P-STO-08 every error code is a short snake_case code; failures carry code and retryable only", () => {
  for (const code of ERROR_CODES) assert.match(code, ERROR_CODE_PATTERN);
  assert.equal(new Set(ERROR_CODES).size, ERROR_CODES.length, "codes are unique");
  assert.deepEqual(controllerError("instance_locked"), { code: "instance_locked", retryable: false });
  assert.deepEqual(controllerError("turn_active", { retryable: true }), { code: "turn_active", retryable: true });
  assert.equal(isErrorCode("instance_locked"), true);
  assert.equal(isErrorCode("Error: boom"), false);
  const thrown = new ControllerFailure(controllerError("storage_record_invalid", { where: "journal" }));
  assert.equal(thrown.message, "storage_record_invalid", "the message is the code, never exception text");
  assert.deepEqual(failureOf(thrown), { code: "storage_record_invalid", retryable: false, where: "journal" });
  assert.deepEqual(failureOf(new Error("CANARY text")), { code: "internal_error", retryable: false });
});

// LISA-XSIGN-08: a graceful stop while her device uploads keys (or her
// identity) is not a failure: no `WARN e2ee_request_failed
// code:matrix_aborted`, one info line instead; a real failure still warns.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { E2eeDevice } from "../../../src/e2ee/device.ts";
import { startIdentity } from "../../../src/e2ee/identity-start.ts";
import { installIndexedDb } from "../../../src/e2ee/library.ts";
import { err } from "../../../src/errors.ts";
import type { LogFields, Logger } from "../../../src/log/logger.ts";
import { abortedError, networkError } from "../../../src/matrix/codes.ts";
import type { CryptoRequestPort } from "../../../src/matrix/port.ts";

function capture(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const make = (): Logger => {
    const at = (level: string) => (event: string, fields?: LogFields): void => {
      lines.push(`${level} ${event} ${JSON.stringify(fields ?? {})}`);
    };
    return { debug: at("DEBUG"), info: at("INFO"), warn: at("WARN"), error: at("ERROR"), child: () => make() };
  };
  return { log: make(), lines };
}

/** A homeserver that answers nothing until the request is aborted. */
const hanging: CryptoRequestPort = {
  cryptoRequest: (_request, signal) => new Promise((resolve) => {
    if (signal.aborted) resolve(err(abortedError()));
    signal.addEventListener("abort", () => resolve(err(abortedError())), { once: true });
  }),
};

const failing: CryptoRequestPort = { cryptoRequest: async () => err(networkError("ECONNREFUSED")) };

let counter = 0;
async function deviceWith(http: CryptoRequestPort, log: Logger): Promise<E2eeDevice> {
  installIndexedDb();
  counter += 1;
  const started = await E2eeDevice.start({
    userId: "@lisa:localhost", deviceId: `LISA${counter}`, http, log,
    store: { storeName: `shutdown-test-${counter}`, failure: () => undefined, close: () => undefined },
  });
  assert.ok(started.ok);
  return started.value;
}

describe("LISA-XSIGN-08: a graceful stop during a key upload", () => {
  test("LISA-XSIGN-08: a stop during the device key upload logs no e2ee_request_failed", async () => {
    const { log, lines } = capture();
    const device = await deviceWith(hanging, log);
    const stop = new AbortController();
    const flushing = device.flush(stop.signal);
    setTimeout(() => stop.abort(), 20);
    const outcome = await flushing;
    assert.equal(outcome.failed, "matrix_aborted");
    assert.equal(lines.some((l) => l.startsWith("WARN")), false, lines.join("\n"));
    assert.ok(lines.some((l) => l.startsWith("INFO e2ee_request_interrupted")));
    device.close();
  });

  test("LISA-XSIGN-08: a stop during the identity step logs no failure either; a refused connection still warns", async () => {
    const { log, lines } = capture();
    const device = await deviceWith(hanging, log);
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 20);
    await startIdentity(device, { userId: "@lisa:localhost", deviceId: "LISA0", http: hanging, log }, stop.signal);
    assert.equal(lines.some((l) => l.startsWith("WARN")), false, lines.join("\n"));
    assert.ok(lines.some((l) => l.startsWith("INFO e2ee_identity_interrupted")));
    device.close();

    const refused = capture();
    const other = await deviceWith(failing, refused.log);
    await other.flush(new AbortController().signal);
    assert.ok(refused.lines.some((l) => l.startsWith("WARN e2ee_request_failed") && l.includes("matrix_network")), refused.lines.join("\n"));
    other.close();
  });
});

// Adversarial loopback servers for the tests of Lisa's own HTTP client
// (`src/http/`): plain HTTP or TLS with a self-signed certificate made for the
// test, on 127.0.0.1 only. Each counts its connections (total, open now and
// the most open at once) and `close()` destroys every socket it accepted.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getCACertificates, setDefaultCACertificates } from "node:tls";

/** What a test server's handler gets. */
export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A listening loopback server. */
export interface Loopback {
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  /** Connections accepted so far (TCP, or TLS sessions for an HTTPS server). */
  connections(): number;
  /** Sockets accepted and not yet closed. */
  open(): number;
  /** The most sockets that were open at the same time. */
  maxOpen(): number;
  /** Resolves once no accepted socket is open, or rejects after `withinMs`. */
  drained(withinMs: number): Promise<void>;
  close(): Promise<void>;
}

/** A key and a self-signed certificate for 127.0.0.1, made with openssl for one test run. */
export interface TestCertificate {
  readonly key: string;
  readonly cert: string;
}

export function makeSelfSignedCert(): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), "lisa-http-tls-"));
  try {
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
      "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"),
    ], { stdio: "ignore" });
    return { key: readFileSync(join(dir, "key.pem"), "utf8"), cert: readFileSync(join(dir, "cert.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Adds the certificate to this test process's default trust store (what every
 * TLS connection without its own `ca` verifies against) and returns the undo.
 * The client itself is unchanged: it never disables verification.
 */
export function trustInThisProcess(cert: string): () => void {
  const before = getCACertificates("default");
  setDefaultCACertificates([...before, cert]);
  return () => setDefaultCACertificates(before);
}

function track(server: Server, event: "connection" | "secureConnection", scheme: "http" | "https"): Promise<Loopback> {
  let connections = 0;
  let maxOpen = 0;
  const sockets = new Set<Socket>();
  const waiters = new Set<() => void>();
  server.on(event, (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    maxOpen = Math.max(maxOpen, sockets.size);
    socket.on("close", () => {
      sockets.delete(socket);
      if (sockets.size === 0) for (const wake of waiters) wake();
    });
  });
  // A TLS server also tracks raw TCP sockets, so that close() can end a handshake in progress.
  const raw = new Set<Socket>();
  if (event === "secureConnection") {
    server.on("connection", (socket: Socket) => {
      raw.add(socket);
      socket.on("close", () => raw.delete(socket));
    });
  }
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as AddressInfo).port;
    resolve({
      url: `${scheme}://127.0.0.1:${port}`, port, server,
      connections: () => connections,
      open: () => sockets.size,
      maxOpen: () => maxOpen,
      drained: (withinMs) => new Promise<void>((done, fail) => {
        if (sockets.size === 0) return done();
        const timer = setTimeout(() => {
          waiters.delete(wake);
          fail(new Error(`${sockets.size} server sockets still open after ${withinMs} ms`));
        }, withinMs);
        const wake = (): void => {
          clearTimeout(timer);
          waiters.delete(wake);
          done();
        };
        waiters.add(wake);
      }),
      close: () => new Promise<void>((done) => {
        for (const socket of [...sockets, ...raw]) socket.destroy();
        server.close(() => done());
      }),
    });
  }));
}

/** A plain HTTP server on 127.0.0.1. */
export function serveHttp(handler: Handler): Promise<Loopback> {
  return track(createServer(handler), "connection", "http");
}

/** An HTTPS server on 127.0.0.1 with the given certificate. */
export function serveHttps(certificate: TestCertificate, handler: Handler): Promise<Loopback> {
  return track(createTlsServer({ key: certificate.key, cert: certificate.cert }, handler), "secureConnection", "https");
}

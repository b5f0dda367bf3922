// Which `Host` headers a loopback listener answers (DNS-rebinding defence):
// a page on evil.example that resolves its own name to 127.0.0.1 still sends
// `Host: evil.example:PORT`, so only the loopback names with the listener's
// own port pass (plus the host the listener was explicitly configured with).

/** The loopback names a local listener answers to. */
export const LOOPBACK_HOSTS: readonly string[] = ["127.0.0.1", "localhost", "[::1]"];

/** True when `header` names a loopback host (or `configured`) with exactly `port`. */
export function hostAllowed(header: string | undefined, port: number, configured?: string): boolean {
  if (header === undefined || header.length > 300) return false;
  const names = new Set(LOOPBACK_HOSTS);
  if (configured !== undefined) names.add((configured.includes(":") && !configured.startsWith("[") ? `[${configured}]` : configured).toLowerCase());
  const value = header.trim().toLowerCase();
  for (const name of names) {
    if (value === `${name}:${port}`) return true;
    if (port === 80 && value === name) return true;
  }
  return false;
}

/** A serialized web origin as browsers send it: `http(s)://host[:port]`, lower case, no path. */
export const ORIGIN = /^https?:\/\/(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]{2,45}\])(?::[0-9]{1,5})?$/;

/** True when a request may pass the Origin check: no Origin (not a browser), or one the operator listed. */
export function originAllowed(header: string | undefined, allowed: readonly string[]): boolean {
  if (header === undefined) return true;
  return allowed.includes(header.trim().toLowerCase());
}

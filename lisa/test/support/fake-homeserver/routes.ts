// The client-server endpoints the fake serves, matched by method and path.

import type { EndpointName } from "./types.ts";

interface Route {
  readonly endpoint: EndpointName;
  readonly methods: readonly string[];
  readonly pattern: RegExp;
}

const CLIENT = String.raw`^/_matrix/client/(?:v3|r0)`;
const SEGMENT = "([^/]+)";

const ROUTES: readonly Route[] = [
  { endpoint: "versions", methods: ["GET"], pattern: /^\/_matrix\/client\/versions$/ },
  { endpoint: "login", methods: ["GET", "POST"], pattern: new RegExp(`${CLIENT}/login$`) },
  { endpoint: "refresh", methods: ["POST"], pattern: /^\/_matrix\/client\/(?:v3|v1)\/refresh$/ },
  { endpoint: "logout", methods: ["POST"], pattern: new RegExp(`${CLIENT}/logout$`) },
  { endpoint: "whoami", methods: ["GET"], pattern: new RegExp(`${CLIENT}/account/whoami$`) },
  { endpoint: "sync", methods: ["GET"], pattern: new RegExp(`${CLIENT}/sync$`) },
  { endpoint: "filter", methods: ["POST"], pattern: new RegExp(`${CLIENT}/user/${SEGMENT}/filter$`) },
  { endpoint: "joined_rooms", methods: ["GET"], pattern: new RegExp(`${CLIENT}/joined_rooms$`) },
  { endpoint: "messages", methods: ["GET"], pattern: new RegExp(`${CLIENT}/rooms/${SEGMENT}/messages$`) },
  { endpoint: "context", methods: ["GET"], pattern: new RegExp(`${CLIENT}/rooms/${SEGMENT}/context/${SEGMENT}$`) },
  { endpoint: "event", methods: ["GET"], pattern: new RegExp(`${CLIENT}/rooms/${SEGMENT}/event/${SEGMENT}$`) },
  {
    endpoint: "relations",
    methods: ["GET"],
    pattern: new RegExp(`^/_matrix/client/v1/rooms/${SEGMENT}/relations/${SEGMENT}(?:/${SEGMENT}(?:/${SEGMENT})?)?$`),
  },
  { endpoint: "send", methods: ["PUT"], pattern: new RegExp(`${CLIENT}/rooms/${SEGMENT}/send/${SEGMENT}/${SEGMENT}$`) },
  { endpoint: "state", methods: ["GET"], pattern: new RegExp(`${CLIENT}/rooms/${SEGMENT}/state/${SEGMENT}(?:/([^/]*))?$`) },
  { endpoint: "directory", methods: ["GET"], pattern: new RegExp(`${CLIENT}/directory/room/${SEGMENT}$`) },
  { endpoint: "typing", methods: ["PUT"], pattern: new RegExp(`${CLIENT}/rooms/${SEGMENT}/typing/${SEGMENT}$`) },
  { endpoint: "joined_members", methods: ["GET"], pattern: new RegExp(`${CLIENT}/rooms/${SEGMENT}/joined_members$`) },
  { endpoint: "members", methods: ["GET"], pattern: new RegExp(`${CLIENT}/rooms/${SEGMENT}/members$`) },
  { endpoint: "keys_upload", methods: ["POST"], pattern: new RegExp(`${CLIENT}/keys/upload$`) },
  { endpoint: "keys_query", methods: ["POST"], pattern: new RegExp(`${CLIENT}/keys/query$`) },
  { endpoint: "keys_claim", methods: ["POST"], pattern: new RegExp(`${CLIENT}/keys/claim$`) },
  { endpoint: "keys_device_signing", methods: ["POST"], pattern: new RegExp(`${CLIENT}/keys/device_signing/upload$`) },
  { endpoint: "keys_signatures", methods: ["POST"], pattern: new RegExp(`${CLIENT}/keys/signatures/upload$`) },
  { endpoint: "send_to_device", methods: ["PUT"], pattern: new RegExp(`${CLIENT}/sendToDevice/${SEGMENT}/${SEGMENT}$`) },
];

/** A matched route: the endpoint, its decoded path parameters, and whether the method fits. */
export interface RouteMatch {
  readonly endpoint: EndpointName;
  readonly params: readonly (string | undefined)[];
  readonly methodAllowed: boolean;
}

/** Matches a raw path; null when no endpoint has this path. Throws URIError on bad escapes. */
export function matchRoute(method: string, rawPath: string): RouteMatch | null {
  for (const route of ROUTES) {
    const match = route.pattern.exec(rawPath);
    if (match === null) continue;
    const params = match.slice(1).map((p) => (p === undefined ? undefined : decodeURIComponent(p)));
    return { endpoint: route.endpoint, params, methodAllowed: route.methods.includes(method) };
  }
  return null;
}

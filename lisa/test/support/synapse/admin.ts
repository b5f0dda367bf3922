import { createHmac } from "node:crypto";
import { type JsonObject, requestJson, requireString, seg } from "./http.ts";
import { MatrixTestClient } from "./client.ts";

/** The parts of a homeserver the helpers need (a `SynapseServer` satisfies it). */
export interface HomeserverRef {
  readonly url: string;
  readonly serverName: string;
}

/** A homeserver whose shared registration secret is known. */
export interface RegistrarRef extends HomeserverRef {
  readonly registrationSharedSecret: string;
}

/** A user created through the shared-secret registration API. */
export interface RegisteredUser {
  userId: string;
  localpart: string;
  password: string;
  admin: boolean;
}

/** Options of `registerUser`. */
export interface RegisterUserOptions {
  localpart: string;
  password: string;
  admin?: boolean;
  displayName?: string;
}

/** Options of `login`. */
export interface LoginOptions {
  deviceId?: string;
  /** Ask for a refresh token (`refresh_token: true`); Synapse then issues expiring access tokens. */
  refreshToken?: boolean;
  initialDeviceDisplayName?: string;
}

/** Tokens returned by `/refresh`. */
export interface RefreshedTokens {
  accessToken: string;
  refreshToken: string | undefined;
  expiresInMs: number | undefined;
}

/** The HMAC-SHA1 that `/_synapse/admin/v1/register` expects over nonce, user, password and admin flag. */
export function registrationMac(secret: string, nonce: string, localpart: string, password: string, admin: boolean): string {
  const hmac = createHmac("sha1", secret);
  hmac.update(`${nonce}\0${localpart}\0${password}\0${admin ? "admin" : "notadmin"}`);
  return hmac.digest("hex");
}

/** Creates a user with the shared-secret admin registration flow (GET nonce, POST with HMAC). */
export async function registerUser(server: RegistrarRef, options: RegisterUserOptions): Promise<RegisteredUser> {
  const admin = options.admin ?? false;
  const nonceBody = await requestJson(server.url, "GET", "/_synapse/admin/v1/register");
  const nonce = requireString(nonceBody, "nonce");
  const body: JsonObject = {
    nonce,
    username: options.localpart,
    password: options.password,
    admin,
    mac: registrationMac(server.registrationSharedSecret, nonce, options.localpart, options.password, admin),
  };
  if (options.displayName !== undefined) body["displayname"] = options.displayName;
  const created = await requestJson(server.url, "POST", "/_synapse/admin/v1/register", { body });
  return { userId: requireString(created, "user_id"), localpart: options.localpart, password: options.password, admin };
}

/** The full user id for a localpart on this server (ids pass through unchanged). */
export function userIdOf(server: HomeserverRef, user: string): string {
  return user.startsWith("@") ? user : `@${user}:${server.serverName}`;
}

function loginBody(server: HomeserverRef, user: string, password: string, options: LoginOptions): JsonObject {
  const body: JsonObject = {
    type: "m.login.password",
    identifier: { type: "m.id.user", user: userIdOf(server, user) },
    password,
  };
  if (options.deviceId !== undefined) body["device_id"] = options.deviceId;
  if (options.refreshToken === true) body["refresh_token"] = true;
  if (options.initialDeviceDisplayName !== undefined) body["initial_device_display_name"] = options.initialDeviceDisplayName;
  return body;
}

/** The raw `/login` response (throws SynapseHttpError on failure, e.g. `M_FORBIDDEN` for a wrong password). */
export function loginRaw(server: HomeserverRef, user: string, password: string, options: LoginOptions = {}): Promise<JsonObject> {
  return requestJson(server.url, "POST", "/_matrix/client/v3/login", { body: loginBody(server, user, password, options) });
}

function optionalString(body: JsonObject, key: string): string | undefined {
  const value = body[key];
  return typeof value === "string" ? value : undefined;
}

function optionalNumber(body: JsonObject, key: string): number | undefined {
  const value = body[key];
  return typeof value === "number" ? value : undefined;
}

/** Password login (user id or localpart) returning a client holding the new token. */
export async function login(
  server: HomeserverRef,
  user: string,
  password: string,
  deviceIdOrOptions?: string | LoginOptions,
): Promise<MatrixTestClient> {
  const options = typeof deviceIdOrOptions === "string" ? { deviceId: deviceIdOrOptions } : (deviceIdOrOptions ?? {});
  const body = await loginRaw(server, user, password, options);
  return new MatrixTestClient({
    baseUrl: server.url,
    userId: requireString(body, "user_id"),
    deviceId: requireString(body, "device_id"),
    accessToken: requireString(body, "access_token"),
    refreshToken: optionalString(body, "refresh_token"),
    expiresInMs: optionalNumber(body, "expires_in_ms"),
  });
}

/** Exchanges a refresh token at `/refresh` for new tokens. */
export async function refreshTokens(server: HomeserverRef, refreshToken: string): Promise<RefreshedTokens> {
  const body = await requestJson(server.url, "POST", "/_matrix/client/v3/refresh", { body: { refresh_token: refreshToken } });
  return {
    accessToken: requireString(body, "access_token"),
    refreshToken: optionalString(body, "refresh_token"),
    expiresInMs: optionalNumber(body, "expires_in_ms"),
  };
}

/** Sets a user's password through the admin API, optionally logging out all of their devices. */
export async function resetPassword(
  admin: MatrixTestClient,
  userId: string,
  newPassword: string,
  options: { logoutDevices: boolean },
): Promise<void> {
  await requestJson(admin.baseUrl, "POST", `/_synapse/admin/v1/reset_password/${seg(userId)}`, {
    accessToken: admin.accessToken,
    body: { new_password: newPassword, logout_devices: options.logoutDevices },
  });
}

// Accounts, devices and tokens: password login, refresh, whoami, logout, and
// access-token validation with each profile's lifecycle.

import { randomBytes } from "node:crypto";
import { errorReply, isObject, okReply } from "./reply.ts";
import type { Reply } from "./reply.ts";
import { traitsOf } from "./traits.ts";
import type { DeviceInfo, HomeserverProfile } from "./types.ts";

/** The authenticated user and device behind a valid access token. */
export interface Session {
  readonly userId: string;
  readonly deviceId: string;
  readonly accessToken: string;
}

/** Outcome of validating a presented access token. */
export type AuthOutcome = { readonly ok: true; readonly session: Session } | { readonly ok: false; readonly reply: Reply };

interface Account {
  password: string;
  readonly devices: Map<string, DeviceInfo>;
}

interface AccessToken {
  readonly userId: string;
  readonly deviceId: string;
  readonly expiresAt: number | null;
  /** Set by `expire`: expired regardless of later clock changes. */
  forcedExpired: boolean;
}

interface RefreshToken {
  readonly userId: string;
  readonly deviceId: string;
  readonly expiresAt: number | null;
  readonly accessToken: string;
}

/** Settings of `Accounts`. */
export interface AccountSettings {
  readonly profile: HomeserverProfile;
  readonly serverName: string;
  readonly now: () => number;
  readonly accessTokenLifetimeMs: number;
  readonly refreshTokenLifetimeMs: number | null;
}

const randomToken = (bytes: number): string => randomBytes(bytes).toString("base64url");
const randomDeviceId = (): string => Array.from(randomBytes(10), (b) => String.fromCharCode(65 + (b % 26))).join("");

/** Users, devices, access tokens and refresh tokens. */
export class Accounts {
  /** Successful password logins. */
  loginCount = 0;
  /** All `POST /login` attempts, failed ones included. */
  loginAttempts = 0;
  /** Successful `/refresh` calls. */
  refreshCount = 0;
  private readonly settings: AccountSettings;
  private readonly accounts = new Map<string, Account>();
  private readonly accessTokens = new Map<string, AccessToken>();
  private readonly refreshTokens = new Map<string, RefreshToken>();

  constructor(settings: AccountSettings) {
    this.settings = settings;
  }

  /** Registers an account; throws if it exists (a test bug). */
  addUser(userId: string, password: string): void {
    if (this.accounts.has(userId)) throw new Error(`fake homeserver: user ${userId} exists`);
    this.accounts.set(userId, { password, devices: new Map() });
  }

  /** Whether `password` is the account's (for user-interactive auth). */
  passwordMatches(userId: string, password: string): boolean {
    return this.accounts.get(userId)?.password === password;
  }

  /** Changes the password; with `logoutDevices`, deletes every device and its tokens (Synapse's default). */
  setPassword(userId: string, password: string, logoutDevices: boolean): void {
    const account = this.accountOf(userId);
    account.password = password;
    if (!logoutDevices) return;
    for (const deviceId of [...account.devices.keys()]) this.deleteDevice(userId, deviceId);
  }

  /** The devices of an account. */
  devices(userId: string): DeviceInfo[] {
    return [...this.accountOf(userId).devices.values()];
  }

  private accountOf(userId: string): Account {
    const account = this.accounts.get(userId);
    if (account === undefined) throw new Error(`fake homeserver: unknown user ${userId}`);
    return account;
  }

  /** The user a token belongs to, if it is currently valid (no side effects). */
  peekUser(token: string | null): string | null {
    const outcome = this.authenticate(token);
    return outcome.ok ? outcome.session.userId : null;
  }

  /** Validates an access token: 401 M_MISSING_TOKEN / M_UNKNOWN_TOKEN (soft_logout on expiry). */
  authenticate(token: string | null): AuthOutcome {
    if (token === null) return { ok: false, reply: errorReply(401, "M_MISSING_TOKEN", "Missing access token.") };
    const entry = this.accessTokens.get(token);
    if (entry === undefined) {
      return { ok: false, reply: errorReply(401, "M_UNKNOWN_TOKEN", "Unknown access token.", { soft_logout: false }) };
    }
    if (entry.forcedExpired || (entry.expiresAt !== null && entry.expiresAt <= this.settings.now())) {
      // Synapse keeps expired tokens and answers soft_logout: the session can be refreshed or re-established.
      return { ok: false, reply: errorReply(401, "M_UNKNOWN_TOKEN", "Access token has expired", { soft_logout: true }) };
    }
    return { ok: true, session: { userId: entry.userId, deviceId: entry.deviceId, accessToken: token } };
  }

  /** Makes a presented token invalid: expired (Synapse) or deleted (Continuwuity has no expiry). */
  expire(token: string): void {
    const entry = this.accessTokens.get(token);
    if (entry === undefined) return;
    if (this.settings.profile === "synapse") entry.forcedExpired = true;
    else this.accessTokens.delete(token);
  }

  /** Expires every access token of `userId` (or of everyone). */
  expireAll(userId?: string): void {
    for (const [token, entry] of this.accessTokens) if (userId === undefined || entry.userId === userId) this.expire(token);
  }

  /** `GET /login`. */
  loginFlows(): Reply {
    const flows: Record<string, unknown>[] = [{ type: "m.login.password" }];
    if (this.settings.profile === "continuwuity") flows.push({ type: "m.login.application_service" }, { type: "m.login.token", get_login_token: false });
    else flows.push({ type: "m.login.application_service" });
    return okReply({ flows });
  }

  /** `POST /login` with `m.login.password`. */
  login(body: unknown): Reply {
    this.loginAttempts += 1;
    if (!isObject(body)) return errorReply(400, "M_NOT_JSON", "Content not JSON.");
    if (body["type"] !== "m.login.password") return errorReply(400, "M_UNKNOWN", "Unknown login type");
    const user = this.identifierUser(body);
    if (user === null) return errorReply(400, "M_INVALID_PARAM", "Invalid login identifier");
    const password = body["password"];
    if (typeof password !== "string") return errorReply(400, "M_MISSING_PARAM", "Missing parameter: password");
    const userId = this.resolveUserId(user);
    const account = userId === null ? undefined : this.accounts.get(userId);
    if (userId === null || account === undefined || account.password !== password) {
      return errorReply(403, "M_FORBIDDEN", "Invalid username or password");
    }
    const requested = body["device_id"];
    const deviceId = typeof requested === "string" && requested !== "" ? requested : randomDeviceId();
    const displayName = body["initial_device_display_name"];
    if (!account.devices.has(deviceId)) {
      account.devices.set(deviceId, { deviceId, displayName: typeof displayName === "string" ? displayName : null });
    } else if (traitsOf(this.settings.profile).loginReplacesDeviceTokens) {
      // Continuwuity and Dendrite: logging in with a known device replaces that device's token.
      this.revokeDeviceTokens(userId, deviceId);
    }
    this.loginCount += 1;
    const wantsRefresh = body["refresh_token"] === true && traitsOf(this.settings.profile).refreshTokens;
    return okReply({ user_id: userId, home_server: this.settings.serverName, device_id: deviceId, ...this.issue(userId, deviceId, wantsRefresh) });
  }

  private identifierUser(body: Record<string, unknown>): string | null {
    const identifier = body["identifier"];
    if (isObject(identifier)) {
      return identifier["type"] === "m.id.user" && typeof identifier["user"] === "string" ? identifier["user"] : null;
    }
    return typeof body["user"] === "string" ? body["user"] : null;
  }

  private resolveUserId(user: string): string | null {
    const full = user.startsWith("@") ? user : `@${user}:${this.settings.serverName}`;
    if (this.accounts.has(full)) return full;
    const lowered = full.toLowerCase();
    return this.accounts.has(lowered) ? lowered : null;
  }

  private issue(userId: string, deviceId: string, refreshable: boolean): Record<string, unknown> {
    const prefix = this.settings.profile === "synapse" ? "syt_" : "";
    const accessToken = `${prefix}${randomToken(24)}`;
    const now = this.settings.now();
    const expiresAt = refreshable ? now + this.settings.accessTokenLifetimeMs : null;
    this.accessTokens.set(accessToken, { userId, deviceId, expiresAt, forcedExpired: false });
    if (!refreshable) return { access_token: accessToken };
    const refreshToken = `syr_${randomToken(24)}`;
    const lifetime = this.settings.refreshTokenLifetimeMs;
    this.refreshTokens.set(refreshToken, { userId, deviceId, expiresAt: lifetime === null ? null : now + lifetime, accessToken });
    return { access_token: accessToken, refresh_token: refreshToken, expires_in_ms: this.settings.accessTokenLifetimeMs };
  }

  /** `POST /refresh`: rotates both tokens; the old refresh token and its access token stop working. */
  refresh(body: unknown): Reply {
    if (!traitsOf(this.settings.profile).refreshTokens) return errorReply(404, "M_UNRECOGNIZED", "Unrecognized request");
    if (!isObject(body)) return errorReply(400, "M_NOT_JSON", "Content not JSON.");
    const presented = body["refresh_token"];
    if (typeof presented !== "string") return errorReply(400, "M_MISSING_PARAM", "Missing parameter: refresh_token");
    const entry = this.refreshTokens.get(presented);
    if (entry === undefined) return errorReply(401, "M_UNKNOWN_TOKEN", "Invalid refresh token", { soft_logout: false });
    if (entry.expiresAt !== null && entry.expiresAt <= this.settings.now()) {
      this.refreshTokens.delete(presented);
      return errorReply(401, "M_UNKNOWN_TOKEN", "The refresh token has expired", { soft_logout: false });
    }
    this.refreshTokens.delete(presented);
    this.accessTokens.delete(entry.accessToken);
    this.refreshCount += 1;
    return okReply(this.issue(entry.userId, entry.deviceId, true));
  }

  /** `POST /logout`: deletes the session's device and its tokens. */
  logout(session: Session): Reply {
    this.deleteDevice(session.userId, session.deviceId);
    return okReply({});
  }

  private deleteDevice(userId: string, deviceId: string): void {
    this.accounts.get(userId)?.devices.delete(deviceId);
    this.revokeDeviceTokens(userId, deviceId);
  }

  private revokeDeviceTokens(userId: string, deviceId: string): void {
    for (const [token, entry] of this.accessTokens) if (entry.userId === userId && entry.deviceId === deviceId) this.accessTokens.delete(token);
    for (const [token, entry] of this.refreshTokens) if (entry.userId === userId && entry.deviceId === deviceId) this.refreshTokens.delete(token);
  }
}

// A second real E2EE client that behaves as Element does in 2026: the
// matrix-js-sdk client with its Rust crypto (the same crypto-wasm Lisa runs),
// an in-memory crypto store, and device isolation set to "exclude insecure
// devices" (`OnlySignedDevicesIsolationMode`): it withholds room keys from
// devices their owner has not cross-signed, and refuses messages they send
// (`UNSIGNED_SENDER_DEVICE`). A member's login (a test client's token and
// device) drives it against the real homeserver. The bare-OlmMachine peer
// (peer.ts) stays for the tests that drive the machine by hand.

import { ClientEvent, createClient, type MatrixClient, type MatrixEvent, MsgType, SyncState } from "matrix-js-sdk";
import { type Logger, logger as sdkLogger } from "matrix-js-sdk/lib/logger.js";
import { EventShieldColour, OnlySignedDevicesIsolationMode } from "matrix-js-sdk/lib/crypto-api/index.js";
import { after } from "node:test";
import type { MatrixTestClient } from "../synapse.ts";

const WAIT_MS = 60_000;

/** matrix-js-sdk logs a lot at debug level; the tests read outcomes, not its log. */
const silent: Logger = {
  trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined,
  getChild: () => silent,
};

// Parts of the library log through its global (loglevel) logger rather than the client's; its child loggers
// (MatrixRTC sessions, one per room) set their own level but copy the parent's method factory, so that is silenced.
const globalLogger = sdkLogger as unknown as { setLevel(level: string): void; methodFactory: unknown; rebuild(): void };
globalLogger.setLevel("silent");
globalLogger.methodFactory = () => () => undefined;
globalLogger.rebuild();

/** What the member's client makes of one event: its cleartext body, or why it could not decrypt it. */
export interface ElementView {
  readonly body?: string;
  readonly failure?: string;
  /** The shield Element would show (`NONE` is no warning). */
  readonly shield?: string;
  /** The cleartext content (with a relation kept outside the ciphertext put back), when decrypted. */
  readonly content?: Readonly<Record<string, unknown>>;
}

/** A room event as the homeserver serves it (`/messages`, `/sync`). */
export interface RawRoomEvent {
  readonly event_id: string;
  readonly type: string;
  readonly sender: string;
  readonly content: Readonly<Record<string, unknown>>;
}

// A key that may still be on its way (to-device behind the room event); every other failure is final.
const KEY_NOT_YET = new Set(["MEGOLM_UNKNOWN_INBOUND_SESSION_ID", "OLM_UNKNOWN_MESSAGE_INDEX"]);

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One member's Element-like client. */
export class ElementPeer {
  readonly client: MatrixClient;
  readonly userId: string;

  private constructor(client: MatrixClient, userId: string) {
    this.client = client;
    this.userId = userId;
  }

  /** Starts the member's client on its own login (a device id of its own), Rust crypto on, insecure devices excluded, first sync done. */
  static async start(member: MatrixTestClient, password: string): Promise<ElementPeer> {
    // Secret storage keys this client made, for it to store secrets with (Element asks the user instead).
    const storageKeys = new Map<string, Uint8Array<ArrayBuffer>>();
    const client = createClient({
      baseUrl: member.baseUrl, userId: member.userId, deviceId: member.deviceId, accessToken: member.accessToken, logger: silent,
      cryptoCallbacks: {
        cacheSecretStorageKey: (keyId, _info, key) => void storageKeys.set(keyId, key),
        getSecretStorageKey: async ({ keys }) => {
          const keyId = Object.keys(keys).find((id) => storageKeys.has(id));
          return keyId === undefined ? null : [keyId, storageKeys.get(keyId) as Uint8Array<ArrayBuffer>];
        },
      },
    });
    await client.initRustCrypto({ useIndexedDB: false });
    const crypto = client.getCrypto();
    if (crypto === undefined) throw new Error("matrix-js-sdk started without crypto");
    crypto.setDeviceIsolationMode(new OnlySignedDevicesIsolationMode());
    // An Element user has a cross-signing identity (Element sets one up at the first login); without one it refuses to encrypt.
    await crypto.bootstrapCrossSigning({
      authUploadDeviceSigningKeys: async (makeRequest) => {
        const auth = { type: "m.login.password", identifier: { type: "m.id.user", user: member.userId }, password };
        try {
          await makeRequest(null);
        } catch (error) {
          const session = (error as { data?: { session?: unknown } }).data?.session;
          if (typeof session !== "string") throw error;
          await makeRequest({ ...auth, session });
        }
      },
    });
    let state: SyncState | null = null;
    client.on(ClientEvent.Sync, (next) => {
      state = next;
    });
    await client.startClient({ initialSyncLimit: 20, lazyLoadMembers: true });
    await until("the first sync", () => state === SyncState.Prepared || state === SyncState.Syncing);
    return new ElementPeer(client, member.userId);
  }

  /**
   * Sets up secret storage the way Element's "Set up recovery" does: a new
   * storage key, her cross-signing keys stored under it; returns the
   * recovery key Element shows the user.
   */
  async setUpRecovery(): Promise<string> {
    const crypto = this.client.getCrypto();
    if (crypto === undefined) throw new Error("no crypto");
    let recoveryKey: string | undefined;
    await crypto.bootstrapSecretStorage({
      setupNewSecretStorage: true,
      createSecretStorageKey: async () => {
        const key = await crypto.createRecoveryKeyFromPassphrase();
        recoveryKey = key.encodedPrivateKey;
        return key;
      },
    });
    if (recoveryKey === undefined) throw new Error("secret storage set up without a new key");
    return recoveryKey;
  }

  /** Sends a text message the way Element does (encrypted when the room is, its key shared per the isolation mode). */
  async sendText(roomId: string, body: string): Promise<string> {
    await until(`room ${roomId} in the client`, () => this.client.getRoom(roomId) !== null);
    const sent = await this.client.sendMessage(roomId, { msgtype: MsgType.Text, body });
    return sent.event_id;
  }

  /** Whether the member's client sees `deviceId` of `userId` as cross-signed by its owner (refreshed from the server). */
  async seesSignedByOwner(userId: string, deviceId: string): Promise<boolean> {
    const crypto = this.client.getCrypto();
    if (crypto === undefined) return false;
    await crypto.getUserDeviceInfo([userId], true);
    const status = await crypto.getDeviceVerificationStatus(userId, deviceId);
    return status?.signedByOwner === true;
  }

  /** The member's client's view of `userId`'s identity (refreshed from the server): known, and whether a change needs approval. */
  async identityView(userId: string): Promise<{ known: boolean; needsUserApproval: boolean }> {
    const crypto = this.client.getCrypto();
    if (crypto === undefined) throw new Error("no crypto");
    await crypto.getUserDeviceInfo([userId], true);
    const status = await crypto.getUserVerificationStatus(userId);
    return { known: status.known, needsUserApproval: status.needsUserApproval };
  }

  /** Waits until the member's client sees Lisa's device cross-signed by its owner (it learns so from `device_lists.changed`). */
  async waitSignedByOwner(userId: string, deviceId: string): Promise<void> {
    await until(`${deviceId} signed by its owner in ${this.userId}'s client`, () => this.seesSignedByOwner(userId, deviceId));
  }

  /** The member's view of event `eventId`, once it reached the client and was tried: body, or failure reason and shield. */
  async view(roomId: string, eventId: string): Promise<ElementView> {
    let event: MatrixEvent | undefined;
    await until(`event ${eventId} in ${this.userId}'s client`, () => {
      event = this.client.getRoom(roomId)?.findEventById(eventId);
      return event !== undefined;
    });
    const found = event as MatrixEvent;
    await this.client.decryptEventIfNeeded(found);
    await until(`event ${eventId} tried`, () => !found.isBeingDecrypted() && (found.getClearContent() !== null || found.isDecryptionFailure()));
    if (found.isDecryptionFailure()) return { failure: String(found.decryptionFailureReason) };
    const info = await this.client.getCrypto()?.getEncryptionInfoForEvent(found);
    return { body: String(found.getContent()["body"]), shield: info === null || info === undefined ? "unknown" : EventShieldColour[info.shieldColour] };
  }

  /**
   * The member's view of an event read from the homeserver (not from its own
   * timeline, which a gappy sync may cut): decrypted by its crypto as Element
   * decrypts a timeline event, with the same isolation mode. A missing room
   * key is tried again (its to-device message may still be on the way) until
   * `keyWaitMs`; any other failure is returned at once.
   */
  async read(roomId: string, raw: RawRoomEvent, keyWaitMs = 15_000): Promise<ElementView> {
    const deadline = Date.now() + keyWaitMs;
    const mapper = this.client.getEventMapper({ preventReEmit: true, decrypt: false });
    for (;;) {
      const event = mapper({ ...raw, room_id: roomId } as unknown as Parameters<typeof mapper>[0]);
      await this.client.decryptEventIfNeeded(event);
      if (!event.isDecryptionFailure()) {
        const info = await this.client.getCrypto()?.getEncryptionInfoForEvent(event);
        const content = event.getContent();
        const relates = event.getWireContent()["m.relates_to"];
        return {
          body: String(content["body"]), shield: info === null || info === undefined ? "unknown" : EventShieldColour[info.shieldColour],
          content: relates !== undefined && content["m.relates_to"] === undefined ? { ...content, "m.relates_to": relates } : content,
        };
      }
      const failure = String(event.decryptionFailureReason);
      if (!KEY_NOT_YET.has(failure) || Date.now() > deadline) return { failure };
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  stop(): void {
    this.client.stopClient();
  }
}

/**
 * Lets a test file that ran an ElementPeer end once all its tests are done.
 * matrix-js-sdk arms a timer for the local timeout of every request it makes
 * (`timeoutSignal` in its http-api, up to 110 s for a sync) and never clears
 * it, so a stopped client still keeps the process alive for minutes after the
 * last test. Called at a test file's top level: a root `after` hook that, once
 * everything else has finished and the results are written, exits with the
 * runner's own status. The timer is unref'd, so it never cuts a run short.
 */
export function endProcessAfterTests(): void {
  after(() => {
    setTimeout(() => process.exit(), 2_000).unref();
  });
}

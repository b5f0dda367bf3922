// The demo's persistent data: one state file (ports, generated passwords,
// the room), the two accounts and the room on the demo homeserver, and the
// configuration and persona Lisa runs with. A second run reuses all of it.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { freeLoopbackPort, login, type MatrixTestClient, registerUser, type SynapseServer, SynapseHttpError } from "../../test/support/synapse.ts";

/** What survives between runs (file mode 0600: it holds the generated passwords). */
export interface DemoState {
  readonly version: 1;
  synapsePort: number;
  llamaPort: number;
  readonly registrationSecret: string;
  readonly lisaPassword: string;
  readonly personPassword: string;
  roomId: string | null;
}

/** The accounts of the demo. */
export const LISA_LOCALPART = "lisa";
/** The person chatting in the terminal. */
export const PERSON_LOCALPART = "demo";
/** The environment variable Lisa reads her password from. */
export const PASSWORD_ENV = "LISA_DEMO_MATRIX_PASSWORD";

const secret = (): string => randomBytes(18).toString("base64url");

/** Reads the state file, or makes a fresh state (nothing is written yet). */
export function loadState(dir: string): { state: DemoState; fresh: boolean } {
  const path = join(dir, "state.json");
  if (existsSync(path)) {
    const state = JSON.parse(readFileSync(path, "utf8")) as DemoState;
    if (state.version === 1) return { state, fresh: false };
  }
  const state: DemoState = {
    version: 1, synapsePort: 0, llamaPort: 0, registrationSecret: secret(), lisaPassword: secret(), personPassword: secret(), roomId: null,
  };
  return { state, fresh: true };
}

/** Writes the state file atomically. */
export function saveState(dir: string, state: DemoState): void {
  const path = join(dir, "state.json");
  writeFileSync(`${path}.tmp`, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** The stored port when it is still free (so a Matrix client's login keeps working), else a new one. */
export async function keepPort(stored: number): Promise<number> {
  return stored > 0 && (await portIsFree(stored)) ? stored : freeLoopbackPort();
}

async function ensureUser(server: SynapseServer, localpart: string, password: string, displayName: string): Promise<MatrixTestClient> {
  try {
    await registerUser(server, { localpart, password, displayName });
  } catch (error) {
    // A second run: the account exists already, with the stored password.
    if (!(error instanceof SynapseHttpError && error.errcode === "M_USER_IN_USE")) throw error;
  }
  return login(server, localpart, password, { deviceId: `DEMO_SETUP_${localpart.toUpperCase()}` });
}

async function joinedRooms(client: MatrixTestClient): Promise<string[]> {
  const body = await client.request("GET", "/_matrix/client/v3/joined_rooms");
  const rooms = body["joined_rooms"];
  return Array.isArray(rooms) ? rooms.filter((room): room is string => typeof room === "string") : [];
}

/** The demo room with both accounts joined, and how it was obtained. */
export interface DemoRoom {
  readonly roomId: string;
  readonly reused: boolean;
  readonly lisaUserId: string;
  readonly personUserId: string;
}

/** Makes sure both accounts exist and share one room; reuses the stored room when both are still in it. */
export async function ensureRoom(server: SynapseServer, state: DemoState): Promise<DemoRoom> {
  const lisa = await ensureUser(server, LISA_LOCALPART, state.lisaPassword, "Lisa");
  const person = await ensureUser(server, PERSON_LOCALPART, state.personPassword, "Demo");
  try {
    const stored = state.roomId;
    if (stored !== null && (await joinedRooms(person)).includes(stored) && (await joinedRooms(lisa)).includes(stored)) {
      return { roomId: stored, reused: true, lisaUserId: lisa.userId, personUserId: person.userId };
    }
    const roomId = await person.createRoom({ name: "Lisa demo", invite: [lisa.userId], preset: "private_chat" });
    await lisa.join(roomId);
    state.roomId = roomId;
    return { roomId, reused: false, lisaUserId: lisa.userId, personUserId: person.userId };
  } finally {
    // The setup logins are not needed any more; Lisa and the chat log in with their own devices.
    await Promise.allSettled([lisa.logout(), person.logout()]);
  }
}

/** The demo persona, written once; the person may edit it between runs. */
export const DEMO_PERSONA = `You are Lisa, a warm, curious and slightly wry member of this small room.
You speak plainly and briefly, like a friend who happens to know things.
You admit when you are unsure, and you never pretend to have looked something up
when you have not. Keep answers to a few sentences.
`;

/** Creates the demo folder and its Synapse data folder. */
export function prepareDir(dir: string): { synapseDir: string } {
  const synapseDir = join(dir, "synapse");
  mkdirSync(synapseDir, { recursive: true, mode: 0o700 });
  return { synapseDir };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Claims the demo folder for this process (one demo per folder: two would share
 * one homeserver database); returns the release function, or throws naming the other demo.
 */
export function claimDir(dir: string): () => void {
  const path = join(dir, "demo.pid");
  const other = existsSync(path) ? Number(readFileSync(path, "utf8").trim()) : 0;
  if (Number.isInteger(other) && other > 0 && other !== process.pid && alive(other)) {
    throw new Error(`another demo (pid ${other}) is running with ${dir}: stop it first, or use --dir for a second one`);
  }
  writeFileSync(path, `${process.pid}\n`);
  return () => rmSync(path, { force: true });
}

/** Writes the persona unless it exists (edits survive); returns its path. */
export function ensurePersona(dir: string): string {
  const path = join(dir, "persona.md");
  if (!existsSync(path)) writeFileSync(path, DEMO_PERSONA);
  return path;
}

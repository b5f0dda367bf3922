// What the in-process encrypted suites share: a room made encrypted before
// Lisa starts, Lisa in process past her first sync, and the member Alice's
// device (a real OlmMachine on the fake homeserver's key endpoints).
import { ALICE, startInProcess, until, type InProcessLisa, type World } from "../lisa-harness.ts";
import { FakeE2eePeer } from "./fake-peer.ts";

export const MEGOLM = "m.megolm.v1.aes-sha2";

/** Encrypts `room`, starts Lisa and Alice's device; a failed start stops what it started. */
export async function startEncryptedLisa(world: World, room: string): Promise<{ lisa: InProcessLisa; alice: FakeE2eePeer }> {
  world.hs.sendState(room, ALICE, "m.room.encryption", "", { algorithm: MEGOLM });
  const lisa = startInProcess(world);
  try {
    await until(() => world.logs.some((l) => l.includes('"sync_baseline"')), 30_000, "Lisa's baseline");
    return { lisa, alice: await FakeE2eePeer.start(world.hs, ALICE, "ALICEDEV") };
  } catch (error) {
    await lisa.stop();
    throw error;
  }
}

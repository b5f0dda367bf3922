// The terminal chat's memory: the vault profile of `lapis-ai-controller/memory`
// over a folder of Markdown files (CHAT_MEMORY, default `chat-memory/` beside
// the chat's state). `/remember` ingests, `/memory` lists, `/forget` tombstones
// and excludes. Each open thread gets a `memory` endpoint whose recall is the
// library's search over that folder, so a new thread recalls what an earlier
// one was told; the controller decides what reaches the agent and reports the
// rendered ids on the turn (`turns.get` → `memory.rendered`).
import { createHash } from "node:crypto";
import { MarkdownFilesStore, portableRedactor, VaultMemory } from "lapis-ai-controller/memory";

const PARTITION = "user";
const sha256 = (text) => createHash("sha256").update(text, "utf8").digest("hex");
const fail = (r) => Object.assign(new Error(r.error.code), { code: r.error.code });

/** The chat's memory over `root`; `say` prints one line. */
export function chatMemory(root, say) {
  const vault = new VaultMemory({ store: new MarkdownFilesStore(root), redactor: portableRedactor() });
  const toRef = (id) => (id.includes(":") ? id : `${PARTITION}:${id}`);
  /** The library's ranked candidates for a query (the endpoint's recall and search answer these). */
  const candidates = async (query, limit) => {
    const found = await vault.candidates({ partitions: [PARTITION], query, limit });
    if (!found.ok) throw fail(found);
    return found.value;
  };
  let registered = null; // { client, endpointId }

  return {
    root,
    /** Registers the memory endpoint of `threadId` (disposing the previous thread's). */
    async attach(client, threadId) {
      if (registered !== null) await registered.client.disposeEndpoint(registered.endpointId).catch(() => {});
      const endpointId = `memory.${threadId}`.slice(0, 128);
      await client.registerEndpoint({
        endpointId, kind: "memory", threadId,
        memory: {
          profile: "vault",
          recall: ({ prompt, limit }) => candidates(prompt, limit),
          search: ({ query, limit }) => candidates(query, limit),
        },
      });
      registered = { client, endpointId };
    },
    async remember(text, threadId) {
      if (text.trim() === "") return say("usage: /remember TEXT");
      const r = await vault.ingest({ partition: PARTITION, text, sources: threadId === null ? [] : [{ ref: `chat:${threadId}`, sha256: sha256(text) }] });
      if (!r.ok) return say(`· not remembered (${r.error.code})`);
      say(r.value.duplicate ? `· already remembered as ${r.value.ref}` : `· remembered ${r.value.ref}`);
    },
    async list() {
      const r = await vault.list(PARTITION);
      if (!r.ok) return say(`· memory unavailable (${r.error.code})`);
      if (r.value.length === 0) return say(`· no memories yet (folder ${root})`);
      for (const m of r.value) {
        const words = m.text.split(/\s+/).slice(0, 8).join(" ");
        say(`  ${m.ref}  ${words}${m.text.split(/\s+/).length > 8 ? " …" : ""}  (updated ${m.updated})`);
      }
    },
    async forget(id) {
      if (id === undefined || id === "") return say("usage: /forget ID (see /memory)");
      const r = await vault.forget(toRef(id));
      if (!r.ok) return say(`· not forgotten (${r.error.code})`);
      say(r.value.alreadyForgotten ? `· ${r.value.ref} was already forgotten` : `· forgot ${r.value.ref}`);
    },
    /** The line shown after a turn: which memory ids reached the agent. */
    usedLine(view) {
      const used = view.memory?.rendered ?? [];
      return used.length === 0 ? null : `· memory used: ${used.map((m) => m.memoryId).join(", ")}`;
    },
  };
}

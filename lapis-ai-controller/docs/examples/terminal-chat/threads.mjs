// The terminal chat's thread commands over the controller's lifecycle methods:
// `/threads` lists this application's threads (`client.threads.list`, newest
// activity first, page by page), `/delete N` erases thread N with everything
// the controller and the agent kept of it (`client.threads.delete`, a running
// turn cancelled first), `/usage` prints the token usage the agent reported
// for the open thread and the whole application (`client.threads.usage`).
import { threadLine, usageLine } from "./present.mjs";

/** Most threads `/threads` shows (pages of 50 until then). */
export const THREADS_SHOWN = 200;

/** The chat's thread commands over `client`; `say` prints one line. */
export function chatThreads(client, say) {
  /** The ids as last listed, so `/resume N` and `/delete N` name what the user saw. */
  let listed = [];
  return {
    get listed() { return listed; },
    /**
     * Prints one line per thread (the open one marked); returns the ids in that
     * order: the ids of `known` first, in its order (the numbers the chat gave
     * them), then the application's other threads, newest activity first.
     */
    async list(currentId, known = []) {
      const rows = [];
      let cursor = null;
      do {
        const page = await client.threads.list({ limit: 50, ...(cursor === null ? {} : { cursor }) });
        rows.push(...page.threads);
        cursor = page.nextCursor;
      } while (cursor !== null && rows.length < THREADS_SHOWN);
      const rank = (id) => (known.includes(id) ? known.indexOf(id) : known.length);
      rows.sort((a, b) => rank(a.threadId) - rank(b.threadId));
      const now = Date.now();
      listed = rows.map((r) => r.threadId);
      if (rows.length === 0) say("no threads yet");
      rows.forEach((r, i) => say(threadLine(i, r.threadId, { ...r, busy: r.active }, r.threadId === currentId, now)));
      return listed;
    },
    /** Deletes thread `n` of the last listing (1-based); returns its id, or null when there is none. */
    async remove(n) {
      const id = listed[Number(n) - 1];
      if (id === undefined) {
        say("no such thread; see /threads");
        return null;
      }
      const receipt = await client.threads.delete(id, { cancelActive: true });
      listed = listed.filter((x) => x !== id);
      say(`deleted thread ${n} (${id}); the agent's own files: ${receipt.agentFiles}`);
      return id;
    },
    /** Prints the open thread's and the application's usage totals. */
    async usage(threadId) {
      if (threadId !== null) say(usageLine("this thread", (await client.threads.usage(threadId)).totals));
      say(usageLine("this application", (await client.threads.usage()).totals));
    },
  };
}

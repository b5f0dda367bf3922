// The group memory scenario of P-MEM-25, run under Node (test/unit/memory/group-nul-texts.test.ts) and Deno
// (test/deno/memory_group_nul_texts_test.ts): record texts holding a NUL come back whole from remember, get, list,
// lexical and hybrid search, supersede and forget, reach the embedder whole, and stay whole after a reopen.
import assert from "node:assert/strict";
import type { TestContext } from "node:test";
import { openGroupMemory, type GroupMemory } from "../../src/memory/group/profile.ts";
import { openSqliteGroupDatabase } from "../../src/memory/group/sqlite-database.ts";
import { claim, CountingProvider, groupDbPath, realRedactor } from "./group-memory.ts";

/** Texts with a NUL in the middle, after a multi-byte character, doubled, and after the last word. */
export const GROUP_NUL_TEXTS = ["tea at\u0000ten on fridays", "café\u0000crème is the order", "two\u0000\u0000nuls in deploy notes", "standup moves to nine\u0000"] as const;

function open(t: TestContext, path: string, provider: CountingProvider): GroupMemory {
  const opened = openGroupMemory({ db: openSqliteGroupDatabase({ path }), capture: realRedactor(t), embeddings: provider });
  assert.ok(opened.ok);
  return opened.value;
}

/** The whole scenario over a fresh database file. */
export async function groupNulTextsWhole(t: TestContext): Promise<void> {
  const path = groupDbPath(t);
  const p = "group:nul";
  const provider = new CountingProvider(16);
  const m = open(t, path, provider);
  const ids: string[] = [];
  try {
    for (const text of GROUP_NUL_TEXTS) {
      const r = m.remember({ partition: p, text, claim: claim("alice", `msg-${ids.length}`) });
      assert.ok(r.ok, r.ok ? "" : r.error.code);
      assert.equal(r.value.text, text);
      ids.push(r.value.id);
    }
    // The same statement again merges its claim: the merged record comes back whole too.
    const merged = m.remember({ partition: p, text: GROUP_NUL_TEXTS[0], claim: claim("bob", "msg-9") });
    assert.ok(merged.ok);
    assert.deepEqual({ id: merged.value.id, text: merged.value.text, revision: merged.value.revision }, { id: ids[0], text: GROUP_NUL_TEXTS[0], revision: 2 });
    for (const [i, id] of ids.entries()) {
      const read = m.get(p, id);
      assert.ok(read.ok);
      assert.equal(read.value.text, GROUP_NUL_TEXTS[i]);
    }
    const listed = m.list(p);
    assert.ok(listed.ok);
    assert.deepEqual(listed.value.map((r) => r.text).sort(), [...GROUP_NUL_TEXTS].sort());
    await m.drained();
    assert.deepEqual([...provider.texts].sort(), [...GROUP_NUL_TEXTS].sort(), "the embedder is handed the whole texts");
    for (const mode of ["lexical", "hybrid"] as const) {
      const found = await m.search({ partitions: [p], text: "tea ten fridays", mode });
      assert.ok(found.ok);
      assert.equal(found.value.hits[0]?.record.text, GROUP_NUL_TEXTS[0], mode);
    }
    const next = "standup moves to half\u0000past nine";
    const replaced = m.supersede(p, ids[3] as string, 1, { text: next, claim: claim("carol", "msg-10") });
    assert.ok(replaced.ok, replaced.ok ? "" : replaced.error.code);
    assert.deepEqual([replaced.value.previous.text, replaced.value.record.text], [GROUP_NUL_TEXTS[3], next]);
    const forgotten = m.forget(p, ids[2] as string, 1);
    assert.ok(forgotten.ok);
    assert.equal(forgotten.value.text, "");
  } finally {
    await m.close();
  }
  const again = open(t, path, new CountingProvider(16));
  try {
    assert.deepEqual(ids.slice(0, 2).map((id) => { const r = again.get(p, id); return r.ok ? r.value.text : r.error.code; }), GROUP_NUL_TEXTS.slice(0, 2));
    const found = await again.search({ partitions: [p], text: "café crème order" });
    assert.ok(found.ok);
    assert.equal(found.value.hits[0]?.record.text, GROUP_NUL_TEXTS[1]);
  } finally {
    await again.close();
  }
}

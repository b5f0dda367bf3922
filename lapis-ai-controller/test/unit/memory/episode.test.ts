// Episode documents, schema 1 (P-MEM-04 on the format docs/memory.md
// defines): every fixture of the corpus round-trips byte-exactly (read, write
// unchanged, same bytes), and malformed documents are refused with a stable
// reason and field, never with file text.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { episodeText, originOf, parseEpisode, serializeEpisode, writeEpisode, type Episode } from "../../../src/memory/lapis/episode.ts";

const CORPUS = join(import.meta.dirname, "..", "..", "fixtures", "memory", "vault", "episodes");
const VALID = join(CORPUS, "valid");
const INVALID = join(CORPUS, "invalid");
const validNames = readdirSync(VALID).filter((n) => n.endsWith(".md")).sort();

function parsed(content: string): Episode {
  const result = parseEpisode(content);
  assert.ok(result.ok, JSON.stringify(!result.ok && result.error));
  return result.value;
}

test("P-MEM-04 every valid fixture round-trips byte-exactly: read, write unchanged, same bytes", () => {
  assert.ok(validNames.length >= 12, "the corpus is varied");
  for (const name of validNames) {
    const bytes = readFileSync(join(VALID, name));
    const episode = parsed(bytes.toString("utf8"));
    const again = Buffer.from(serializeEpisode(episode), "utf8");
    assert.ok(again.equals(bytes), name);
    const written = writeEpisode(episode);
    assert.ok(written.ok && Buffer.from(written.content, "utf8").equals(bytes), name);
  }
});

test("P-MEM-04 the corpus covers CRLF, unicode, long bodies, many sources, no sources and every tier and state", () => {
  const all = validNames.map((n) => ({ n, e: parsed(readFileSync(join(VALID, n), "utf8")) }));
  const get = (n: string) => all.find((x) => x.n === n)!.e;
  assert.equal(get("crlf.md").newline, "\r\n");
  assert.equal(episodeText(get("crlf.md")), "Written on Windows.\r\nSecond line.");
  assert.equal(get("crlf-mixed-body.md").body, "CRLF front matter,\nLF body line,\r\nthen CRLF again.");
  assert.match(episodeText(get("unicode.md")), /👨‍👩‍👧/u);
  assert.equal(get("unicode.md").sources[0]!.ref, "note:Zürich/日記.md#L3");
  assert.ok(get("long-body.md").body.length > 40_000 && get("long-body.md").body.includes("\n---\n"), "a fence line inside the body stays body");
  assert.equal(get("multi-source.md").sources.length, 3);
  assert.deepEqual(get("no-sources.md").sources, []);
  assert.equal(get("no-sources.md").body, "No trailing newline here");
  assert.deepEqual(new Set(all.map((x) => x.e.tier)), new Set(["episode", "promoted"]));
  assert.deepEqual(new Set(all.map((x) => x.e.state)), new Set(["active", "superseded", "forgotten"]));
  assert.equal(get("superseded.md").supersededBy, "ep-promoted");
  assert.equal(get("forgotten.md").body, "");
  assert.equal(originOf(get("recall-origin.md").tags), "recall");
  assert.equal(originOf(get("basic.md").tags), "ingest");
  assert.equal(get("long-body.md").revision, 7);
});

test("P-MEM-04 a changed field serializes to the canonical form and parses back to the same episode", () => {
  const base = parsed(readFileSync(join(VALID, "crlf.md"), "utf8"));
  const next: Episode = { ...base, revision: base.revision + 1, updated: "2026-05-01T00:00:00.000Z", tags: [...base.tags, "topic:os"] };
  const written = writeEpisode(next);
  assert.ok(written.ok);
  assert.deepEqual(written.value, next);
  assert.ok(!written.content.replace(/\r\n/g, "").includes("\n"), "the document keeps its CRLF newline");
  const broken = writeEpisode({ ...base, id: "Not An Id" });
  assert.ok(!broken.ok && broken.error.reason === "field_invalid" && broken.error.field === "id", "a write never produces a document the reader refuses");
});

test("P-MEM-04 malformed documents are refused with memory_record_invalid, a stable reason and field, and no file text", () => {
  const expected = JSON.parse(readFileSync(join(INVALID, "expected.json"), "utf8")) as Record<string, { reason: string; field?: string }>;
  const names = readdirSync(INVALID).filter((n) => n.endsWith(".md")).sort();
  assert.deepEqual(names, Object.keys(expected).sort(), "every invalid fixture has an expected refusal");
  assert.ok(names.length >= 30);
  for (const name of names) {
    const result = parseEpisode(readFileSync(join(INVALID, name), "utf8"));
    assert.ok(!result.ok, name);
    const want = expected[name]!;
    const error: Record<string, unknown> = { code: "memory_record_invalid", retryable: false, reason: want.reason };
    if (want.field !== undefined) error.field = want.field;
    assert.deepEqual(result.error, error, name);
  }
});

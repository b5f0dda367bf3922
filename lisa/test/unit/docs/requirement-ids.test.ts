// Requirement ids a clone can read (LISA-IDS-01): every named id a test or
// bench file carries is listed in docs/requirements.md, every listed id is
// carried by at least one test or bench file, and no test is named after a
// tracker number, which means nothing to someone holding only the clone.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ID = /\bLISA-[A-Z]+(?:-[A-Z]+)*-\d{2}\b/g;
// A test or describe title that names a tracker number ("issue 18: ...").
const TRACKER_TITLE = /\b(?:describe|test|it)\(\s*[`"'][^`"'\n]*\b[Ii]ssue \d+/;

function filesUnder(dir: string, suffix: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path, suffix));
    else if (entry.name.endsWith(suffix)) out.push(path);
  }
  return out;
}

function idsIn(text: string): Set<string> {
  return new Set(text.match(ID) ?? []);
}

const requirementsDoc = readFileSync(join(ROOT, "docs/requirements.md"), "utf8");
const listed = idsIn(requirementsDoc);
const carriers = [...filesUnder("test", ".ts"), ...filesUnder("bench", ".ts")].map((path) => ({
  path,
  text: readFileSync(join(ROOT, path), "utf8"),
}));

describe("LISA-IDS-01: requirement ids a clone can read", () => {
  test("the requirements page lists named ids", () => {
    assert.ok(listed.size >= 10, `only ${listed.size} ids listed`);
  });

  test("every id a test or bench file names is listed in docs/requirements.md", () => {
    const unlisted: string[] = [];
    for (const { path, text } of carriers) {
      for (const id of idsIn(text)) if (!listed.has(id)) unlisted.push(`${id} in ${relative(".", path)}`);
    }
    assert.deepEqual(unlisted, []);
  });

  test("every listed id is named by at least one test or bench file", () => {
    const named = new Set(carriers.flatMap(({ text }) => [...idsIn(text)]));
    assert.deepEqual([...listed].filter((id) => !named.has(id)), []);
  });

  test("no test is named after a tracker number", () => {
    const offenders = carriers
      .filter(({ path }) => path.startsWith("test"))
      .flatMap(({ path, text }) =>
        text.split("\n").flatMap((line, index) => (TRACKER_TITLE.test(line) ? [`${path}:${index + 1}`] : [])));
    assert.deepEqual(offenders, []);
  });

  test("the check itself finds an unlisted id and a tracker-numbered title", () => {
    // Built from parts, so this file does not carry the strings it checks for.
    const unlisted = ["LISA", "NOWHERE", "99"].join("-");
    assert.deepEqual([...idsIn(`test("${unlisted}: x")`)], [unlisted]);
    assert.ok(!listed.has(unlisted));
    assert.ok(TRACKER_TITLE.test(`describe("${"iss" + "ue"} 18: room power levels", () => {`));
    assert.ok(!TRACKER_TITLE.test('describe("LISA-ROOMS-01: room power levels", () => {'));
  });
});

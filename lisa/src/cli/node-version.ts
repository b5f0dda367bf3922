// The Node.js version guard of the `lisa` entry (src/bin.ts). It must load and
// run on old Node versions too, so it imports nothing and uses plain syntax:
// its whole job is to say in one line what Lisa needs instead of an opaque
// SyntaxError from a Node 24 API deeper in the import graph.

/** The oldest Node.js major version Lisa runs on (package.json `engines`). */
export const REQUIRED_NODE_MAJOR = 24;

/** One line saying what Lisa needs when `version` (like `v20.20.2`) is older than required or unreadable; null when it is fine. */
export function nodeVersionProblem(version: string): string | null {
  const match = /^v?(\d+)\.\d+\.\d+/.exec(version);
  const major = match === null ? NaN : Number(match[1]);
  if (major >= REQUIRED_NODE_MAJOR) return null;
  return "lisa: needs Node.js " + REQUIRED_NODE_MAJOR + " or newer, but this is Node.js " + version;
}

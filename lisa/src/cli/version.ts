import { readFileSync } from "node:fs";

/** Lisa's version from package.json (one level above both src/ and dist/). */
export function lisaVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: unknown };
  return typeof pkg.version === "string" ? pkg.version : "unknown";
}

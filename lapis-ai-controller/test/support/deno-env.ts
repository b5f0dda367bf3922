// The environment every Deno child of the tests and the bench gets. Deno's
// own update check resolves and fetches dl.deno.land (a fresh HOME means a
// fresh DENO_DIR, so it runs on every start); tests and the bench reach
// 127.0.0.1 only (test/integration/no-phone-home.test.ts).

/** Merged into the environment of every Deno process a test or the bench starts. */
export const DENO_CHILD_ENV: Readonly<Record<string, string>> = { DENO_NO_UPDATE_CHECK: "1" };

// The Deno lane of P-STO-40 and P-STO-41: Deno's node:sqlite reads rows through its own code (a text cut at a NUL), so the
// chunk's short metadata, the readers that give its id back, its fail-closed cases and the one catalog read run here too.
import "../unit/persistence/chunk-metadata.test.ts";
import "../unit/persistence/catalog-v1.test.ts";

// The Deno lane of P-STO-43: startup reads a large table in pages with all() (Deno's node:sqlite builds a row through its
// iterator for ~2.3x what all() costs), so the paged read's every-row-once cases run here too.
import "../unit/persistence/table-pages.test.ts";

// What one `doctor` check is: the inputs every check reads and the lines it
// answers with. The runner (`doctor.ts`) and each family of checks
// (`doctor.ts`'s own, `doctor-provider.ts`) import this; nothing here imports
// them, so the checks and their runner never import each other.

import type { Json } from "../domain/records.ts";
import type { ControllerPaths } from "./paths.ts";
import type { RuntimeHost } from "./runtime-host.ts";

/** One check's outcome. */
export interface Check {
  readonly name: string;
  readonly ok: boolean;
  /** A short fixed note or code, never a secret. */
  readonly note: string;
}

/** What doctor looks at. */
export interface DoctorInputs {
  readonly host: RuntimeHost;
  readonly paths: ControllerPaths;
  /** The running program's build (its release manifest) and the snapshot root holding it; null in a checkout. */
  readonly build: { readonly digest: string; readonly version: string; readonly root?: string } | null;
  /** The config as `serve` would see it: `ok` only when the whole serve check passed (`where` names the failing key path). */
  readonly config: { readonly ok: boolean; readonly exists: boolean; readonly code?: string; readonly where?: string; readonly tokens?: Json };
  /** The config sections (for checks that read providers, workspaces or limits). */
  readonly sections?: Readonly<Record<string, Json>>;
  readonly env: (name: string) => string | undefined;
}

/** One doctor check: one or more lines, possibly after a bounded probe (async). */
export type DoctorCheck = (inputs: DoctorInputs) => Check | readonly Check[] | Promise<Check | readonly Check[]>;

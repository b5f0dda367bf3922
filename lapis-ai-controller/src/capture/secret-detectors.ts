// The pinned credential-detector table of the in-repo scanner
// ("pinned-secret-scanner", not agent-redaction, which is unpublished). The
// table is data: its version and sha256 digest are reported by status --json
// (P-CAP-08), so a changed table is visible. The table and the pure matching
// live in domain/secret-detectors.ts (the memory library's portable redactor
// uses them too); here the service runs them inside the scan worker.
import { createHash } from "node:crypto";

export {
  compileDetectors, DETECTOR_TABLE_VERSION, MIN_SECRET_LENGTH, OMISSION_PREFIX, REDACTION_PREFIX, redactionMarker, scanText, SECRET_DETECTORS,
  type RedactionSpan, type ScanResult, type SecretDetector,
} from "../domain/secret-detectors.ts";
import { DETECTOR_TABLE_VERSION, SECRET_DETECTORS, type SecretDetector } from "../domain/secret-detectors.ts";

/** sha256 over the canonical JSON of version and table. */
export function detectorTableDigest(table: readonly SecretDetector[] = SECRET_DETECTORS): string {
  const canonical = JSON.stringify({ version: DETECTOR_TABLE_VERSION, detectors: table.map((d) => [d.id, d.pattern]) });
  return createHash("sha256").update(canonical).digest("hex");
}


// Builds the service's redaction parts from config `limits.capture`
// ({deadlineMs, resultBufferBytes, blockBytes, toolCallMs}; validated and capped): the
// worker client, the redactor over it, and the detector-table facts that
// readiness and status report (never any scanned content).
import { BLOCK_LIMIT_CAP, BLOCK_LIMIT_DEFAULT } from "./event-blocks.ts";
import { PinnedSecretRedactor } from "./redactor.ts";
import { ScanClient, scanLimits } from "./scan-client.ts";
import { DETECTOR_TABLE_VERSION, SECRET_DETECTORS, detectorTableDigest } from "./secret-detectors.ts";

/** The running redaction parts. */
export type CaptureParts = { scanner: ScanClient; redactor: PinnedSecretRedactor; blockBytes: number; toolCallMs: number };

/** Deadline of one application tool or capture callback through the bridge. */
export const TOOL_CALL_MS_DEFAULT = 120_000;
export const TOOL_CALL_MS_CAP = 600_000;

/** Non-secret facts about the pinned detector table (P-CAP-08). */
export function redactionFacts(): { scanner: string; detectorTable: string; detectors: number; digest: string } {
  return { scanner: "pinned-secret-scanner", detectorTable: DETECTOR_TABLE_VERSION, detectors: SECRET_DETECTORS.length, digest: detectorTableDigest() };
}

/** The validated `limits.capture` settings. */
export type CaptureSettings = { scan: ReturnType<typeof scanLimits> & { ok: true }; blockBytes: number; toolCallMs: number };

/** Validates `limits.capture` without starting anything; the failing key path on error. */
export function captureSettings(raw: unknown): { ok: true; value: CaptureSettings } | { ok: false; where: string } {
  if (raw !== undefined && (raw === null || typeof raw !== "object" || Array.isArray(raw))) return { ok: false, where: "config.limits.capture" };
  const { blockBytes, toolCallMs, ...rest } = (raw ?? {}) as Record<string, unknown>;
  let toolMs = TOOL_CALL_MS_DEFAULT;
  if (toolCallMs !== undefined) {
    if (typeof toolCallMs !== "number" || !Number.isInteger(toolCallMs) || toolCallMs < 100 || toolCallMs > TOOL_CALL_MS_CAP) return { ok: false, where: "config.limits.capture.toolCallMs" };
    toolMs = toolCallMs;
  }
  let block = BLOCK_LIMIT_DEFAULT;
  if (blockBytes !== undefined) {
    if (typeof blockBytes !== "number" || !Number.isInteger(blockBytes) || blockBytes < 1024 || blockBytes > BLOCK_LIMIT_CAP) return { ok: false, where: "config.limits.capture.blockBytes" };
    block = blockBytes;
  }
  const limits = scanLimits(rest);
  if (!limits.ok) return { ok: false, where: `config.limits.capture.${limits.key.slice(0, 64)}` };
  return { ok: true, value: { scan: limits, blockBytes: block, toolCallMs: toolMs } };
}

/** Validates `limits.capture` and starts the scanner worker; the failing key path on error. */
export function createCapture(raw: unknown): { ok: true; value: CaptureParts } | { ok: false; where: string } {
  const settings = captureSettings(raw);
  if (!settings.ok) return settings;
  const scanner = new ScanClient(settings.value.scan.value);
  scanner.warm();
  return { ok: true, value: { scanner, redactor: new PinnedSecretRedactor(scanner), blockBytes: settings.value.blockBytes, toolCallMs: settings.value.toolCallMs } };
}

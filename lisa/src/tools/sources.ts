import type { SourceEntry, SourceLookup } from "./port.ts";
import { normalizeSourceUrl } from "../web/url.ts";
import { boundedLabel } from "./text.ts";

/** Longest source title kept, in UTF-16 code units. */
export const SOURCE_TITLE_MAX_CHARACTERS = 200;
/** Most sources one invocation registers. */
export const MAX_SOURCES = 500;

/** The invocation-local registry of URLs the model may cite. */
export class SourceRegistry implements SourceLookup {
  readonly #entries = new Map<string, SourceEntry>();
  #material = false;

  /** Registers `url` (normalised) with an optional title; returns the normalised URL, or null if refused. */
  register(url: string, title: string | null): string | null {
    const normalised = normalizeSourceUrl(url);
    if (normalised === null) return null;
    const label = boundedLabel(title, SOURCE_TITLE_MAX_CHARACTERS);
    const existing = this.#entries.get(normalised);
    if (existing !== undefined) {
      if (existing.title === null && label !== null) this.#entries.set(normalised, { url: normalised, title: label });
      return normalised;
    }
    if (this.#entries.size >= MAX_SOURCES) return null;
    this.#entries.set(normalised, { url: normalised, title: label });
    return normalised;
  }

  /** Records that a successful search, fetch or conversion result reached the model. */
  markMaterial(): void {
    this.#material = true;
  }

  resolve(url: string): SourceEntry | null {
    const normalised = normalizeSourceUrl(url);
    return normalised === null ? null : (this.#entries.get(normalised) ?? null);
  }

  materialResultsUsed(): boolean {
    return this.#material;
  }

  /** Forgets every source. */
  clear(): void {
    this.#entries.clear();
  }
}

// Loads the terminal chat's memory module (docs/examples/terminal-chat/memory.mjs,
// plain JavaScript the chat runs) for tests. The chat imports the package by
// name; here that name resolves to this checkout's memory library.
import { registerHooks } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const MEMORY_LIBRARY = pathToFileURL(join(import.meta.dirname, "..", "..", "src", "memory", "index.ts")).href;
registerHooks({ resolve: (specifier, context, next) => next(specifier === "lapis-ai-controller/memory" ? MEMORY_LIBRARY : specifier, context) });

/** The chat memory as the chat uses it. */
export type ChatMemory = {
  readonly root: string;
  attach(client: unknown, threadId: string): Promise<void>;
  remember(text: string, threadId: string | null): Promise<void>;
  list(): Promise<void>;
  forget(id: string | undefined): Promise<void>;
  usedLine(view: { readonly memory?: { readonly rendered: readonly { readonly memoryId: string }[] } | null }): string | null;
};

export const { chatMemory } = (await import(new URL("../../docs/examples/terminal-chat/memory.mjs", import.meta.url).href)) as { chatMemory: (root: string, say: (line: string) => void) => ChatMemory };

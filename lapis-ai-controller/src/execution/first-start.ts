// Runs a provider's session setups one at a time until one has succeeded: an
// agent's first start initializes its own state (Codex creates its state
// database under CODEX_HOME), and several first starts at once fail there.
// Each waiter is bounded by the setups ahead of it, each under its own deadline.

/** One gate per executor; providers are keyed by id. */
export class FirstStartGate {
  #initialized = new Set<string>();
  #queues = new Map<string, Promise<void>>();

  /** Runs `start` alone while the provider has never set up successfully. */
  async run<T extends { ok: boolean }>(providerId: string, start: () => Promise<T>): Promise<T> {
    if (this.#initialized.has(providerId)) return start();
    const ahead = this.#queues.get(providerId) ?? Promise.resolve();
    let release = () => {};
    const mine = new Promise<void>((resolve) => { release = resolve; });
    this.#queues.set(providerId, ahead.then(() => mine));
    await ahead;
    try {
      const result = await start();
      if (result.ok) this.#initialized.add(providerId);
      return result;
    } finally {
      release();
    }
  }
}

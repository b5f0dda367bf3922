// A value made once per key and kept, at most `max` of them (the least
// recently used goes first). Used for SQLite statements prepared once per SQL
// text, by the store and by the group memory's database.

/** What `keptPerKey` returns: `get` calls `make` only for a key it does not hold; `clear` lets go of all. */
export interface KeptPerKey<V> {
  get(key: string): V;
  clear(): void;
}

export function keptPerKey<V>(make: (key: string) => V, max: number): KeptPerKey<V> {
  const kept = new Map<string, V>();
  const get = (key: string): V => {
    const hit = kept.get(key);
    if (hit !== undefined) {
      kept.delete(key);
      kept.set(key, hit);
      return hit;
    }
    const made = make(key);
    kept.set(key, made);
    if (kept.size > max) kept.delete(kept.keys().next().value as string);
    return made;
  };
  return { get, clear: () => kept.clear() };
}

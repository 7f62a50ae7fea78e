// What one process remembers of the stores between requests, to save a read: a bounded map whose
// entries are trusted for a while. Used for a team's list tip (call-list-positions.ts), a filter's
// match count (call-list-match-counts.ts), what never changes of a key (auth/api-keys.ts), and a
// call's team and a team's adapter for provider callbacks (calls/provider-events.ts). Nothing in it is
// ever the only copy: a forgotten or distrusted entry costs a read, never a wrong answer (but for
// removed provider credentials, which a remembered adapter still honours for at most 30 s:
// calls/provider-events.ts).

export interface RememberedValues<V> {
  /** The value, while it is trusted. */
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  /** Forgets one entry (a value found wrong, a read that failed). */
  forget(key: string): void;
  /** Forgets everything, as a restarted process would (tests). */
  clear(): void;
}

export function rememberedValues<V>(options: {
  /** How long an entry is trusted after it was set (for ever when left out). */
  trustedMs?: number;
  /** Entries kept; past that the map starts again, rather than keeping an order to evict by. */
  maxEntries: number;
}): RememberedValues<V> {
  const entries = new Map<string, { value: V; setAt: number }>();
  const trustedMs = options.trustedMs ?? Infinity;
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      const age = Date.now() - entry.setAt;
      // (A clock set back gives a negative age: not trusted either.)
      return age >= 0 && age < trustedMs ? entry.value : undefined;
    },
    set(key, value) {
      if (entries.size >= options.maxEntries && !entries.has(key)) entries.clear();
      entries.set(key, { value, setAt: Date.now() });
    },
    forget(key) {
      entries.delete(key);
    },
    clear() {
      entries.clear();
    },
  };
}

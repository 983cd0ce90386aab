/**
 * What a long-running process (`npm run dev`) keeps from one generator run to
 * the next, so that a one-file change redoes the work of one file. Each value
 * sits under a short key (a file, a path) with the text it was made from (the
 * file's text, the resource's IR as JSON): it serves only a run that would
 * make it from the same text. Comparing two texts is cheaper than hashing one
 * as a key, and a key holds only its latest value, so the cache stays the size
 * of the project however long a session lasts; what the last run did not use
 * (a removed file) goes when the next run ends. A run that used none of it
 * (one that stopped at an error before emitting) leaves it as it was, so that
 * the run after it is not cold.
 */
export class RunCache<V> {
  private kept = new Map<string, Entry<V>>();
  private used = new Map<string, Entry<V>>();

  /** The value under `key` if it was made from `from`, else undefined. */
  get(key: string, from: string): V | undefined {
    const entry = this.used.get(key) ?? this.kept.get(key);
    if (entry === undefined || entry.from !== from) return undefined;
    this.used.set(key, entry);
    return entry.value;
  }

  set(key: string, from: string, value: V): void {
    this.used.set(key, { from, value });
  }

  /** The value under `key` made from `from`, made now if no run made it from that. */
  through(key: string, from: string, make: () => V): V {
    let value = this.get(key, from);
    if (value === undefined) {
      value = make();
      this.set(key, from, value);
    }
    return value;
  }

  /** Ends a run: what it did not use is forgotten. */
  endRun(): void {
    if (this.used.size === 0) return;
    this.kept = this.used;
    this.used = new Map();
  }
}

interface Entry<V> {
  from: string;
  value: V;
}

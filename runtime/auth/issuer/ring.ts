import type { IssuerSettings } from '../../contract.js';
import { DEFAULT_KEY_TIMINGS, IssuerKeys, type KeyEvents, type KeyTimings } from './keys.js';

/**
 * The key sets of every outside issuer a server serves, one per issuer and
 * key URL whichever backends name it, made once for the server's life: a
 * reload of the routes (the console, `npm run dev`) keeps the keys, their age
 * and the refetch interval, so that it neither fetches again nor forgets an
 * outage.
 */
export class IssuerKeyRing {
  private readonly sets = new Map<string, IssuerKeys>();
  /** Each set's first fetch. */
  private readonly first: Promise<void>[] = [];

  constructor(
    private readonly events: KeyEvents,
    private readonly timings: KeyTimings = DEFAULT_KEY_TIMINGS,
  ) {}

  keysOf(settings: IssuerSettings): IssuerKeys {
    const id = JSON.stringify([settings.iss, settings.keys]);
    let keys = this.sets.get(id);
    if (keys === undefined) {
      keys = new IssuerKeys(settings, this.timings, this.events);
      this.sets.set(id, keys);
      this.first.push(keys.load());
    }
    return keys;
  }

  /** Every key set, fetched (or failed) once: start-up waits for this to refuse a discovery document of another issuer. */
  async loaded(): Promise<readonly IssuerKeys[]> {
    await Promise.all(this.first);
    return [...this.sets.values()];
  }

  /** Undefined while every issuer's keys can serve; else why not, naming the first issuer that cannot (/readyz). */
  unavailable(): string | undefined {
    for (const keys of this.sets.values()) {
      const why = keys.unavailable();
      if (why !== undefined) return why;
    }
    return undefined;
  }
}

import type { IssuerKeyRing } from '../auth/issuer/index.js';
import { Readiness } from '../health.js';
import type { ServerOptions } from './options.js';

/** `/readyz`: whether the server should get traffic. */
export function serverReadiness(options: ServerOptions, issuerKeys: IssuerKeyRing): Readiness {
  // Ready when the database answers and every outside issuer's keys can serve (§9: /readyz names the issuer).
  const readiness = new Readiness({
    check: async () => {
      await options.database.ping(1000);
      const keys = issuerKeys.unavailable();
      if (keys !== undefined) throw new Error(keys);
    },
  });
  return readiness;
}

import type { BackendModule } from '../../contract.js';
import { isCanonicalUid } from '../scheme.js';
import { type IssuedClaims, type JwtKey, signToken, type TokenSettings } from './jwt.js';

/** Issues a backend's tokens (both token shapes): its issuer, its name, lifetime and `iat` unit, the server's key. */
export class TokenIssuer {
  private readonly settings: TokenSettings;

  constructor(
    private readonly backend: BackendModule,
    private readonly key: JwtKey,
  ) {
    this.settings = { issuer: backend.issuer, backend: backend.name, lifetime: backend.tokenLifetime, iatUnit: backend.iatUnit };
  }

  sign(claims: IssuedClaims): string {
    // A token this server would refuse is never issued: the auth query must return the id as its canonical text.
    if (!isCanonicalUid(this.backend.uidType, claims.sub)) {
      throw new Error(`backend "${this.backend.name}": the auth query's sub is not the canonical text of a ${this.backend.uidType} user id`);
    }
    return signToken(this.key, this.settings, claims);
  }
}

import { AuditTrail } from '../audit/index.js';
import { DEFAULT_IDEMPOTENCY_RETENTION_SECONDS } from '../contract/safe-writes.js';
import { Events } from '../events/index.js';
import { Housekeeping } from '../housekeeping.js';
import { idempotencyPruning } from '../idempotency/index.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { Peers } from '../peers.js';
import type { ServerOptions } from './options.js';

/** The server's events and API audit, and the housekeeping that prunes their old rows. */
export function eventsAndAudit(options: ServerOptions, logger: Logger, metrics: Metrics, peers: Peers) {
  // Events and the audit (docs/internals/contract.md §12): one of each for the server's life; a reload reconfigures the webhooks.
  const events = new Events({
    database: options.database,
    logger,
    registry: metrics.registry,
    secrets: options.webhookSecrets ?? {},
    serverId: peers.id,
    ...options.events,
  });
  const audit = new AuditTrail(options.database, logger, metrics.registry, options.audit?.retentionDays);
  // Delivered events, audit rows and idempotency records past their retention: pruned by one server at a time, a batch a tick.
  const housekeeping = new Housekeeping(peers, logger);
  const idempotency = idempotencyPruning(options.database, options.idempotency?.retentionSeconds ?? DEFAULT_IDEMPOTENCY_RETENTION_SECONDS);
  housekeeping.start([events.pruning(), audit.pruning(), idempotency]);
  return { events, audit, housekeeping };
}

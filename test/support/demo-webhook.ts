/**
 * What the demo's desk backend (resources/desk/backend.xml) reads from the environment for its Webhook, as every
 * server that serves this repository's resources needs it: a fixed Standard Webhooks secret (tests only) and a
 * loopback URL nothing listens on (port 9, discard), so that an event a test emits waits in the outbox as
 * undeliverable rather than going anywhere. A test that checks deliveries sets its own receiver's URL.
 */
export const DEMO_WEBHOOK_ENV = {
  DESK_WEBHOOK_SECRET: 'whsec_BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=',
  DESK_WEBHOOK_URL: 'http://127.0.0.1:9/hooks/desk',
} as const;

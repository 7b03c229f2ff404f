import { useSharedTestApp } from './utils/create-test-app.js';
import { asymmetricSigning } from './utils/signing-keys.js';
import { onPostgres } from './utils/test-database.js';

/**
 * On PostgreSQL the migrations store instants as `timestamp with time zone`, while a `Date`
 * column in an entity is what TypeORM would create as `timestamp without time zone`. That one
 * difference is deliberate; any other one means the migrations and the entities have drifted.
 */
const TIMESTAMP_COLUMNS =
  '(lockoutEnd|createdAt|lastLoginAt|emailVerifiedAt|expiresAt|revokedAt|sessionStartedAt|' +
  'nextAttemptAt|claimedUntil|finishedAt|confirmedAt|startedAt|lastUsedAt|oldestTokenAt|endedAt)';
const DELIBERATE_POSTGRES_TIMESTAMP_CHANGE = new RegExp(
  [
    `^ALTER TABLE "(users|sessions|refresh_tokens|account_tokens|mail_outbox|totp_factors|recovery_codes|email_codes)" DROP COLUMN "${TIMESTAMP_COLUMNS}"$`,
    `^ALTER TABLE "(users|sessions|refresh_tokens|account_tokens|mail_outbox|totp_factors|recovery_codes|email_codes)" ADD "${TIMESTAMP_COLUMNS}" TIMESTAMP( NOT NULL)?$`,
    // Recreating a session's oldestTokenAt means recreating its index.
    '^DROP INDEX "\\w+"\\."IDX_sessions_oldestTokenAt"$',
    '^CREATE INDEX "IDX_sessions_oldestTokenAt" ON "sessions" {2}\\("oldestTokenAt"\\) $',
    // The outbox's due-mail index, which holds nextAttemptAt.
    '^DROP INDEX "\\w+"\\."IDX_mail_outbox_state_nextAttemptAt"$',
    '^CREATE INDEX "IDX_mail_outbox_state_nextAttemptAt" ON "mail_outbox" {2}\\("state", "nextAttemptAt"\\) $',
    // The audit trail's time column, and the two indexes on it.
    '^ALTER TABLE "auth_events" DROP COLUMN "occurredAt"$',
    '^ALTER TABLE "auth_events" ADD "occurredAt" TIMESTAMP NOT NULL$',
    '^DROP INDEX "\\w+"\\."IDX_auth_events_(userId_)?occurredAt"$',
    '^CREATE INDEX "IDX_auth_events_occurredAt" ON "auth_events" {2}\\("occurredAt"\\) $',
    '^CREATE INDEX "IDX_auth_events_userId_occurredAt" ON "auth_events" {2}\\("userId", "occurredAt"\\) $',
    // Passkeys' instants, and the expiry index of their challenges.
    `^ALTER TABLE "(passkeys|passkey_challenges)" DROP COLUMN "${TIMESTAMP_COLUMNS}"$`,
    `^ALTER TABLE "(passkeys|passkey_challenges)" ADD "${TIMESTAMP_COLUMNS}" TIMESTAMP( NOT NULL)?$`,
    '^DROP INDEX "\\w+"\\."IDX_passkey_challenges_expiresAt"$',
    '^CREATE INDEX "IDX_passkey_challenges_expiresAt" ON "passkey_challenges" {2}\\("expiresAt"\\) $',
    // The admin keys' instants (issue 28), and the index on the revocation time.
    `^ALTER TABLE "admin_keys" DROP COLUMN "(createdAt|revokedAt)"$`,
    `^ALTER TABLE "admin_keys" ADD "(createdAt|revokedAt)" TIMESTAMP( NOT NULL)?$`,
    '^DROP INDEX "\\w+"\\."IDX_admin_keys_revokedAt"$',
    '^CREATE INDEX "IDX_admin_keys_revokedAt" ON "admin_keys" {2}\\("revokedAt"\\) $',
    // The key set's instants.
    '^ALTER TABLE "signing_keys" DROP COLUMN "(createdAt|activatesAt|retiredAt)"$',
    '^ALTER TABLE "signing_keys" ADD "(createdAt|activatesAt|retiredAt)" TIMESTAMP( NOT NULL)?$',
    // Sign-in through other providers (issue 38) and the OpenID clients (issue 39): their instants,
    // and the expiry indexes on them.
    '^ALTER TABLE "(federated_identities|federation_codes|federation_flows|oauth_clients)" DROP COLUMN "(linkedAt|lastUsedAt|createdAt|expiresAt)"$',
    '^ALTER TABLE "(federated_identities|federation_codes|federation_flows|oauth_clients)" ADD "(linkedAt|lastUsedAt|createdAt|expiresAt)" TIMESTAMP( NOT NULL)?$',
    // The OpenID provider's artefacts (issue 39, part 2), and their expiry index.
    '^ALTER TABLE "oauth_artefacts" DROP COLUMN "(expiresAt|consumedAt)"$',
    '^ALTER TABLE "oauth_artefacts" ADD "(expiresAt|consumedAt)" TIMESTAMP$',
    '^ALTER TABLE "oauth_consents" DROP COLUMN "grantedAt"$',
    '^ALTER TABLE "oauth_consents" ADD "grantedAt" TIMESTAMP NOT NULL$',
    '^DROP INDEX "\\w+"\\."IDX_oauth_artefacts_expiresAt"$',
    '^CREATE INDEX "IDX_oauth_artefacts_expiresAt" ON "oauth_artefacts" {2}\\("expiresAt"\\) $',
    '^DROP INDEX "\\w+"\\."IDX_federation_(codes|flows)_expiresAt"$',
    '^CREATE INDEX "IDX_federation_(codes|flows)_expiresAt" ON "federation_(codes|flows)" {2}\\("expiresAt"\\) $',
    // The webhooks' instants.
    '^ALTER TABLE "webhook_subscriptions" DROP COLUMN "createdAt"$',
    '^ALTER TABLE "webhook_subscriptions" ADD "createdAt" TIMESTAMP NOT NULL$',
    '^ALTER TABLE "webhook_deliveries" DROP COLUMN "(occurredAt|nextAttemptAt|claimedUntil|finishedAt)"$',
    '^ALTER TABLE "webhook_queue" DROP COLUMN "occurredAt"$',
    '^ALTER TABLE "webhook_queue" ADD "occurredAt" TIMESTAMP NOT NULL$',
    '^ALTER TABLE "webhook_deliveries" ADD "(occurredAt|nextAttemptAt|claimedUntil|finishedAt)" TIMESTAMP( NOT NULL)?$',
  ].join('|'),
);

describe.each([
  ['by default', {}],
  // The OpenID provider's entities are registered only when it is on.
  [
    'with the OpenID provider on',
    {
      environment: asymmetricSigning('ES256', {
        OAuthServer__Enabled: 'true',
        OAuthServer__Issuer: 'http://127.0.0.1:3000',
      }),
    },
  ],
])('schema %s', (_name, options) => {
  const t = useSharedTestApp(options);

  it('should be exactly what the entities describe after the migrations', async () => {
    const pending = await t.dataSource.driver.createSchemaBuilder().log();
    const drift = pending.upQueries
      .map((query) => query.query)
      .filter((sql) => !(onPostgres && DELIBERATE_POSTGRES_TIMESTAMP_CHANGE.test(sql)));

    expect(drift).toEqual([]);
  });
});

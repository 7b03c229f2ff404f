import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { RandomSource } from '../../common/random/random-source.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import { extensionMigrationsOf, type KeygateExtension } from '../../database/keygate-extension.js';
import { AdminKeysService } from '../keys/admin-keys.service.js';
import { AdminCliModule } from './admin-cli.module.js';
import { AdminService } from '../admin.service.js';
import { cliOrigin } from './cli-origin.js';
import { CLI_USAGE, parseCliArguments, UsageError, type CliInvocation } from './cli-arguments.js';
import { CliLogger } from './cli-logger.js';
import { CliOutput } from './cli-output.js';
import { newFileSink, streamSink, type DrainableStream } from './line-sink.js';
import { KeysService } from '../../keys/keys.service.js';
import { runKeysCommand } from '../../keys/admin/keys-commands.js';
import { WebhooksService } from '../../webhooks/webhooks.service.js';
import { WebhookCliOutput } from '../../webhooks/admin/webhook-cli-output.js';
import { OAuthClientsService } from '../../oauth-server/oauth-clients.service.js';
import { OAuthClientCliOutput } from '../../oauth-server/admin/oauth-client-cli-output.js';
import { InitialAccessTokensService } from '../../oauth-server/registration/initial-access-tokens.service.js';
import { AppConfig } from '../../config/app-config.js';
import { IdentitiesAdminService } from '../../federation/admin/identities-admin.service.js';
import { IdentityCliOutput } from '../../federation/admin/identity-cli-output.js';

/** The documented exit codes (docs/operations/admin-cli.md). */
export const ExitCode = { ok: 0, failure: 1, usage: 2 } as const;

export interface CliStreams {
  /** Waited on when it asks: `audit:export` may write the whole trail to it. */
  readonly out: DrainableStream;
  readonly err: { write(text: string): unknown };
}

/**
 * Runs one command line and returns the exit code. This is the one place that turns failures
 * into exit codes and messages: a wrong command line is 2 and starts nothing; anything that
 * fails once the command runs (unknown account, configuration, database) is 1. The audit trail
 * is written before the database closes, whatever happened. The migrations of `extensions` run
 * after the core's, as the service runs them, so either may be the first to meet a database.
 */
export async function runCli(
  argv: readonly string[],
  streams: CliStreams,
  extensions: readonly KeygateExtension[] = [],
): Promise<number> {
  let invocation: CliInvocation;
  try {
    invocation = parseCliArguments(argv);
  } catch (error: unknown) {
    if (error instanceof UsageError) {
      streams.err.write(`keygate-cli: ${error.message}\nRun with --help to see the commands.\n`);
      return ExitCode.usage;
    }
    throw error;
  }
  if (invocation.kind === 'help') {
    streams.out.write(CLI_USAGE);
    return ExitCode.ok;
  }

  let app: INestApplicationContext | undefined;
  try {
    // The collision report is what a failed e-mail migration asks for: it must run before it.
    const migrate = invocation.command !== 'users:email-collisions';
    const extensionMigrations = extensionMigrationsOf(extensions);
    const module = await AdminCliModule.forRoot({ migrate, extensionMigrations });
    app = await NestFactory.createApplicationContext(module, {
      logger: new CliLogger(),
      abortOnError: false,
    });
    const output = await execute(
      { admin: app.get(AdminService), keys: app.get(AdminKeysService) },
      invocation,
      cliOrigin(app.get(RandomSource)),
      streams,
      app,
    );
    if (output !== null) {
      streams.out.write(`${output}\n`);
    }
    return ExitCode.ok;
  } catch (error: unknown) {
    if (error instanceof UsageError) {
      // A command of a capability the configuration leaves off: told as a wrong command line.
      streams.err.write(`keygate-cli: ${error.message}\n`);
      return ExitCode.usage;
    }
    const reason = error instanceof Error ? error.message : String(error);
    streams.err.write(`keygate-cli: ${invocation.command} failed: ${reason}\n`);
    return ExitCode.failure;
  } finally {
    if (app !== undefined) {
      await app.close();
    }
  }
}

/** Runs the command; resolves to what to print, or null when it printed its own answer. */
function execute(
  { admin, keys }: { admin: AdminService; keys: AdminKeysService },
  invocation: Exclude<CliInvocation, { kind: 'help' }>,
  origin: RequestOrigin,
  streams: CliStreams,
  app: INestApplicationContext,
): Promise<string | null> {
  switch (invocation.command) {
    case 'users:deactivate':
      return admin.deactivate({ email: invocation.email }, origin).then(CliOutput.deactivated);
    case 'users:activate':
      return admin.activate({ email: invocation.email }, origin).then(CliOutput.activated);
    case 'users:unlock':
      return admin.unlock({ email: invocation.email }, origin).then(CliOutput.unlocked);
    case 'users:delete':
      return admin.deleteUser({ email: invocation.email }, origin).then(CliOutput.deleted);
    case 'users:mfa-reset':
      return admin.resetMfa({ email: invocation.email }, origin).then(CliOutput.mfaReset);
    case 'sessions:revoke-all':
      return admin
        .revokeAllSessions({ email: invocation.email }, origin)
        .then(CliOutput.sessionsRevoked);
    case 'users:email-collisions':
      return admin.emailCollisions().then(CliOutput.emailCollisions);
    case 'tokens:purge':
      return admin.purgeExpiredTokens(origin).then(CliOutput.purged);
    case 'audit':
      return admin.auditOf(invocation.email, invocation.limit, origin).then(CliOutput.audit);
    case 'audit:purge':
      return admin.purgeAudit(origin).then(CliOutput.auditPurged);
    case 'audit:export':
      return exportAudit(admin, invocation, origin, streams);
    case 'keys:list':
    case 'keys:rotate':
    case 'keys:retire':
    case 'keys:import':
      return runKeysCommand(app.get(KeysService), invocation, origin);
    case 'webhooks:add':
      return app.get(WebhooksService).add(invocation, origin).then(WebhookCliOutput.added);
    case 'webhooks:list':
      return app.get(WebhooksService).list().then(WebhookCliOutput.list);
    case 'webhooks:remove':
      return app
        .get(WebhooksService)
        .remove(invocation.id, origin)
        .then(() => WebhookCliOutput.removed(invocation.id));
    case 'webhooks:dead':
      return app.get(WebhooksService).dead().then(WebhookCliOutput.dead);
    case 'webhooks:replay':
      return app.get(WebhooksService).replay(invocation.id, origin).then(WebhookCliOutput.replayed);
    case 'oauth-clients:add':
      return app
        .get(OAuthClientsService)
        .add(
          {
            name: invocation.name,
            redirectUris: invocation.redirectUris,
            postLogoutRedirectUris: invocation.postLogoutRedirectUris,
            isPublic: invocation.isPublic,
            scopes: invocation.scopes ?? undefined,
            grantTypes: invocation.grantTypes ?? undefined,
          },
          { origin },
        )
        .then(OAuthClientCliOutput.added);
    case 'oauth-clients:list':
      return app.get(OAuthClientsService).list().then(OAuthClientCliOutput.list);
    case 'oauth-clients:remove':
      return app
        .get(OAuthClientsService)
        .remove(invocation.id, { origin })
        .then(() => OAuthClientCliOutput.removed(invocation.id));
    case 'oauth-clients:rotate-secret':
      return app
        .get(OAuthClientsService)
        .rotateSecret(invocation.id)
        .then(OAuthClientCliOutput.rotated);
    case 'oauth-clients:initial-access-token':
      return app
        .get(InitialAccessTokensService)
        .create(invocation.expiresInSeconds)
        .then(OAuthClientCliOutput.initialAccessToken);
    case 'users:passkeys-remove':
      return admin
        .removePasskeys({ email: invocation.email }, origin)
        .then(CliOutput.passkeysRemoved);
    case 'users:identities': {
      const identities = identitiesAdmin(app);
      return admin
        .findUser({ email: invocation.email })
        .then(async (user) => IdentityCliOutput.list(user, await identities.identitiesOf(user.id)));
    }
    case 'users:unlink-identity': {
      const identities = identitiesAdmin(app);
      return admin
        .findUser({ email: invocation.email })
        .then(async (user) =>
          IdentityCliOutput.unlinked(
            user,
            await identities.unlink(user.id, invocation.identityId, origin),
          ),
        );
    }
    case 'admin-keys:create':
      return keys
        .create(invocation.name, invocation.scopes, origin)
        .then(CliOutput.adminKeyCreated);
    case 'admin-keys:list':
      return keys.list().then(CliOutput.adminKeys);
    case 'admin-keys:revoke':
      return keys.revoke(invocation.name, origin).then(CliOutput.adminKeyRevoked);
  }
}

/** The identity commands' service; a usage error while federation is not configured. */
function identitiesAdmin(app: INestApplicationContext): IdentitiesAdminService {
  if (app.get(AppConfig).federation === null) {
    throw new UsageError(
      'federation is not configured (Federation__Providers is not set): accounts have no linked identities.',
    );
  }
  return app.get(IdentitiesAdminService);
}

/**
 * JSON Lines to the file named (created, never overwritten, synced before the answer) or to
 * standard output, which then carries nothing but the lines.
 */
async function exportAudit(
  admin: AdminService,
  { before, output }: Extract<CliInvocation, { command: 'audit:export' }>,
  origin: RequestOrigin,
  streams: CliStreams,
): Promise<string | null> {
  const sink = output === null ? streamSink(streams.out) : await newFileSink(output);
  let rowCount: number;
  try {
    rowCount = await admin.exportAudit(
      before,
      (entry) => sink.write(CliOutput.auditLine(entry)),
      origin,
    );
    await sink.finish();
  } catch (error: unknown) {
    await sink.abandon();
    throw error;
  }
  return output === null ? null : CliOutput.auditExported(rowCount, before, output);
}

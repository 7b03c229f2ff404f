import { accountName, printable } from '../../admin/cli/cli-output.js';
import type { AccountIdentities, IdentityUnlinked } from './identities-admin.service.js';

/** What `users:identities` and `users:unlink-identity` print. */
export const IdentityCliOutput = {
  /** One line an identity, oldest first; what a provider chose (subject, address) is quoted when odd. */
  list: ({ account, identities }: AccountIdentities): string =>
    identities.length === 0
      ? `${accountName(account)} has no linked identities.`
      : [
          `Identities linked to ${accountName(account)}: ${identities.length}, oldest first.`,
          ...identities.map(
            (identity) =>
              `${identity.id}  ${identity.provider}  subject=${printable(identity.subject)}  ` +
              `email=${identity.email === null ? '-' : printable(identity.email)}  ` +
              `linked ${identity.linkedAt.toISOString()}  ` +
              `last used ${identity.lastUsedAt?.toISOString() ?? 'never'}`,
          ),
        ].join('\n'),

  unlinked: ({ account, identity }: IdentityUnlinked): string =>
    `Unlinked identity ${identity.id} (${identity.provider}) from ${accountName(account)}; ` +
    'its sessions stay.',
} as const;

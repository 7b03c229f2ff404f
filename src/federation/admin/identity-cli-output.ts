import { printable } from '../../common/text/printable.js';
import type { FederatedIdentity } from '../entities/federated-identity.entity.js';

/** The account a command names, as the admin CLI's other commands name it. */
export interface NamedAccount {
  readonly id: string;
  readonly email: string;
}

const nameOf = (account: NamedAccount): string => `${account.email} (user ${account.id})`;

/** What `users:identities` and `users:unlink-identity` print. */
export const IdentityCliOutput = {
  /** One line an identity, oldest first; what a provider chose (subject, address) is quoted when odd. */
  list: (account: NamedAccount, identities: readonly FederatedIdentity[]): string =>
    identities.length === 0
      ? `${nameOf(account)} has no linked identities.`
      : [
          `Identities linked to ${nameOf(account)}: ${identities.length}, oldest first.`,
          ...identities.map(
            (identity) =>
              `${identity.id}  ${identity.provider}  subject=${printable(identity.subject)}  ` +
              `email=${identity.email === null ? '-' : printable(identity.email)}  ` +
              `linked ${identity.linkedAt.toISOString()}  ` +
              `last used ${identity.lastUsedAt?.toISOString() ?? 'never'}`,
          ),
        ].join('\n'),

  unlinked: (account: NamedAccount, identity: FederatedIdentity): string =>
    `Unlinked identity ${identity.id} (${identity.provider}) from ${nameOf(account)}; ` +
    'its sessions stay.',
} as const;

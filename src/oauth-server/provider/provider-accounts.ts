import { Injectable } from '@nestjs/common';
import type { Account, AccountClaims } from 'oidc-provider';
import { UsersService } from '../../users/users.service.js';

/**
 * The accounts the provider signs people in to: Keygate's. `sub` is the account id (stable; an
 * e-mail address can change); `email` and `email_verified` come with the `email` scope,
 * `preferred_username` and `name` (both the username: Keygate keeps no other name) with
 * `profile`. A deactivated or deleted account is no account: its tokens stop answering UserInfo.
 */
@Injectable()
export class ProviderAccounts {
  constructor(private readonly users: UsersService) {}

  async find(accountId: string): Promise<Account | undefined> {
    const user = await this.users.findById(accountId);
    if (user === null || !user.isActive) {
      return undefined;
    }
    const claims: AccountClaims = {
      sub: user.id,
      email: user.email,
      email_verified: user.emailVerifiedAt !== null,
      preferred_username: user.username,
      name: user.username,
    };
    return { accountId: user.id, claims: () => claims };
  }
}

import { Injectable, Logger } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { digestOpaqueToken } from '../../common/crypto/opaque-token.js';
import {
  ConflictError,
  InvalidArgumentError,
  NotFoundError,
} from '../../common/errors/domain-errors.js';
import { RandomSource } from '../../common/random/random-source.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import { Clock } from '../../common/time/clock.js';
import { UnitOfWork } from '../../database/unit-of-work.js';
import { AuthEvents } from '../../events/auth-events.js';
import { AdminKeyRepository } from './admin-key.repository.js';
import { AdminKeysMessages } from './admin-keys.messages.js';
import {
  ADMIN_SCOPES,
  isAdminScope,
  type AdminScopeName,
} from '../../common/admin-route/admin-scopes.js';
import type { AdminPrincipal } from '../../common/admin-route/current-admin.decorator.js';
import { ADMIN_KEY_NAME_MAX_LENGTH, AdminKey } from './entities/admin-key.entity.js';

/** Every admin key starts so: a leaked one is recognisable (secret scanners, logs). */
export const ADMIN_KEY_PREFIX = 'kga_';

/** 256 bits from the CSPRNG, base64url: 43 characters after the prefix. */
const ADMIN_KEY_BYTES = 32;
const ADMIN_KEY_PATTERN = /^kga_[A-Za-z0-9_-]{43}$/;

/** A name an operator can type and a log line can carry: letters, digits, `.`, `_`, `-`. */
const KEY_NAME_PATTERN = new RegExp(
  `^[A-Za-z0-9][A-Za-z0-9._-]{0,${ADMIN_KEY_NAME_MAX_LENGTH - 1}}$`,
);

export interface AdminKeySummary extends AdminPrincipal {
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
}

/**
 * Admin API keys: created, listed and revoked by the admin CLI, checked by the admin API's guard.
 * A key is stored only as its digest and looked up by it; the secret is shown once, at creation.
 */
@Injectable()
export class AdminKeysService {
  private readonly logger = new Logger(AdminKeysService.name);

  constructor(
    private readonly keys: AdminKeyRepository,
    private readonly unitOfWork: UnitOfWork,
    private readonly events: AuthEvents,
    private readonly random: RandomSource,
    private readonly clock: Clock,
  ) {}

  /**
   * A new key named `name` with `scopes` (each one of ADMIN_SCOPES, at least one); resolves to
   * the key and its secret, which is not stored and cannot be shown again.
   */
  async create(
    name: string,
    scopes: readonly string[],
    origin: RequestOrigin,
  ): Promise<{ key: AdminKeySummary; secret: string }> {
    if (!KEY_NAME_PATTERN.test(name)) {
      throw new InvalidArgumentError(
        `The key name must be 1 to ${ADMIN_KEY_NAME_MAX_LENGTH} letters, digits, ".", "_" or "-", starting with a letter or digit.`,
      );
    }
    const granted = parseScopes(scopes);
    const secret = ADMIN_KEY_PREFIX + this.random.bytes(ADMIN_KEY_BYTES).toString('base64url');
    const key = Object.assign(new AdminKey(), {
      id: this.random.uuid(),
      name,
      keyDigest: digestOpaqueToken(secret),
      scopes: granted.join(' '),
      createdAt: this.clock.now(),
      revokedAt: null,
    });
    await this.unitOfWork.transaction(async (m) => {
      if (!(await this.keys.insert(m, key))) {
        throw new ConflictError(AdminKeysMessages.keyNameTaken(name));
      }
      await this.events.record(
        m,
        {
          type: 'admin_key_created',
          userId: null,
          adminKeyId: key.id,
          adminKeyName: name,
          scopes: granted,
        },
        origin,
      );
    });
    this.logger.log(`Admin key ${name} (${key.id}) created with scopes ${key.scopes}`);
    return { key: summaryOf(key), secret };
  }

  list(): Promise<AdminKeySummary[]> {
    return this.keys.list().then((keys) => keys.map(summaryOf));
  }

  /** Revokes the unrevoked key named `name`: it opens nothing from the next request on. */
  async revoke(name: string, origin: RequestOrigin): Promise<AdminKeySummary> {
    const revoked = await this.unitOfWork.transaction(async (m) => {
      const key = await this.keys.revoke(m, name, this.clock.now());
      if (key === null) {
        throw new NotFoundError(AdminKeysMessages.keyNotFound(name));
      }
      await this.events.record(
        m,
        {
          type: 'admin_key_revoked',
          userId: null,
          adminKeyId: key.id,
          adminKeyName: key.name,
          scopes: scopesOf(key),
        },
        origin,
      );
      return key;
    });
    this.logger.log(`Admin key ${revoked.name} (${revoked.id}) revoked`);
    return summaryOf(revoked);
  }

  /**
   * The unrevoked key whose secret is `presented`; null for anything else. The lookup is by the
   * digest (a 256-bit secret leaves nothing to learn from its timing), and the digest found is
   * compared again in constant time, so no index or collation quirk can match a near miss.
   */
  async authenticate(presented: string): Promise<AdminPrincipal | null> {
    if (!ADMIN_KEY_PATTERN.test(presented)) {
      return null;
    }
    const digest = digestOpaqueToken(presented);
    const key = await this.keys.findByDigest(digest);
    if (
      key === null ||
      key.revokedAt !== null ||
      !timingSafeEqual(Buffer.from(key.keyDigest, 'utf8'), Buffer.from(digest, 'utf8'))
    ) {
      return null;
    }
    return { id: key.id, name: key.name, scopes: scopesOf(key) };
  }

  /** Whether any unrevoked key exists: until one does, the admin API answers 404. */
  anyActive(): Promise<boolean> {
    return this.keys.anyActive();
  }
}

/** The scopes asked for, each known, without repeats, in ADMIN_SCOPES order. */
function parseScopes(scopes: readonly string[]): AdminScopeName[] {
  const asked = scopes.map((scope) => scope.trim()).filter((scope) => scope !== '');
  const unknown = asked.find((scope) => !isAdminScope(scope));
  if (unknown !== undefined) {
    throw new InvalidArgumentError(
      `Unknown scope "${unknown}"; the scopes are ${ADMIN_SCOPES.join(', ')}.`,
    );
  }
  if (asked.length === 0) {
    throw new InvalidArgumentError(`A key needs at least one scope: ${ADMIN_SCOPES.join(', ')}.`);
  }
  return ADMIN_SCOPES.filter((scope) => asked.includes(scope));
}

/** A stored key's scopes; one no longer known (a release removed it) grants nothing. */
function scopesOf(key: AdminKey): AdminScopeName[] {
  return key.scopes.split(' ').filter(isAdminScope);
}

function summaryOf(key: AdminKey): AdminKeySummary {
  return {
    id: key.id,
    name: key.name,
    scopes: scopesOf(key),
    createdAt: key.createdAt,
    revokedAt: key.revokedAt,
  };
}

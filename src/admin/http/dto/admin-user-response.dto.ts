import { ApiProperty } from '@nestjs/swagger';
import type { AccountDetails, SecondFactor } from '../../admin.service.js';
import type { User } from '../../../users/entities/user.entity.js';

/** An account as the admin API lists it. Never the password hash. */
export class AdminUserResponseDto {
  @ApiProperty({ format: 'uuid' })
  readonly id: string;

  readonly username: string;

  readonly email: string;

  /** False once deactivated: no login, refresh or protected route works. */
  readonly isActive: boolean;

  /** When the current address was verified; null: never. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  readonly emailVerifiedAt: string | null;

  @ApiProperty({ format: 'date-time' })
  readonly createdAt: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  readonly lastLoginAt: string | null;

  /** Failed logins counted since the last successful one (SPEC §3.1). */
  readonly failedLoginAttempts: number;

  /** When the lockout ends (it may have ended already); null: none was started. */
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  readonly lockoutEnd: string | null;

  static from(user: User): AdminUserResponseDto {
    return {
      id: user.id,
      username: user.username,
      email: user.email,
      isActive: user.isActive,
      emailVerifiedAt: user.emailVerifiedAt?.toISOString() ?? null,
      createdAt: user.createdAt.toISOString(),
      lastLoginAt: user.lastLoginAt?.toISOString() ?? null,
      failedLoginAttempts: user.failedLoginAttempts,
      lockoutEnd: user.lockoutEnd?.toISOString() ?? null,
    };
  }
}

/**
 * A second factor of an account: the TOTP factor, or a passkey. A passkey shows its id, name,
 * last use and backup flags; never its credential id or public key.
 */
export class AdminFactorResponseDto {
  @ApiProperty({ enum: ['totp', 'passkey'] })
  readonly kind: 'totp' | 'passkey';

  /** False while a TOTP enrolment waits for its first code (not yet a factor). */
  readonly isConfirmed: boolean;

  @ApiProperty({ format: 'date-time' })
  readonly createdAt: string;

  /** A passkey's id (a UUID), as the account's own passkey routes name it. */
  readonly id?: string;

  /** A passkey's name, as its owner gave it. */
  readonly name?: string;

  /** When a passkey last signed in; null if never. */
  @ApiProperty({ format: 'date-time', nullable: true, required: false, type: String })
  readonly lastUsedAt?: string | null;

  /** A passkey's authenticator may sync it to other devices (WebAuthn BE flag). */
  readonly isBackupEligible?: boolean;

  /** A passkey is synced now (WebAuthn BS flag). */
  readonly isBackedUp?: boolean;

  static from(factor: SecondFactor): AdminFactorResponseDto {
    if (factor.kind === 'totp') {
      return {
        kind: factor.kind,
        isConfirmed: factor.confirmedAt !== null,
        createdAt: factor.createdAt.toISOString(),
      };
    }
    const { passkey } = factor;
    return {
      kind: factor.kind,
      isConfirmed: true,
      createdAt: passkey.createdAt.toISOString(),
      id: passkey.id,
      name: passkey.name,
      lastUsedAt: passkey.lastUsedAt?.toISOString() ?? null,
      isBackupEligible: passkey.isBackupEligible,
      isBackedUp: passkey.isBackedUp,
    };
  }
}

/** One account with what support needs to help it. */
export class AdminUserDetailsResponseDto extends AdminUserResponseDto {
  /** A lockout is running now. */
  readonly isLockedOut: boolean;

  /** Its second factors (pending enrolments included, marked); empty when none. */
  @ApiProperty({ type: [AdminFactorResponseDto] })
  readonly factors: AdminFactorResponseDto[];

  /** Sessions neither ended nor expired. */
  readonly activeSessionCount: number;

  static fromDetails(details: AccountDetails): AdminUserDetailsResponseDto {
    return {
      ...AdminUserResponseDto.from(details.user),
      isLockedOut: details.isLockedOut,
      factors: details.factors.map((factor) => AdminFactorResponseDto.from(factor)),
      activeSessionCount: details.activeSessionCount,
    };
  }
}

/** A page of accounts. */
export class AdminUserListResponseDto {
  @ApiProperty({ type: [AdminUserResponseDto] })
  readonly users: AdminUserResponseDto[];

  /** Pass as `cursor` for the next page; null on the last page. */
  @ApiProperty({ type: String, nullable: true })
  readonly nextCursor: string | null;
}

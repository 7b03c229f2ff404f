import { ApiProperty } from '@nestjs/swagger';
import type { FederatedIdentity } from '../entities/federated-identity.entity.js';

/** An identity at another provider linked to the account. */
export class IdentityResponseDto {
  /** @example "3f2504e0-4f89-41d3-9a0c-0305e82c3301" */
  @ApiProperty({ format: 'uuid' })
  readonly id: string;

  /** The provider's id. @example "google" */
  readonly provider: string;

  /** The person's id at the provider. @example "110169484474386276334" */
  readonly subject: string;

  /** The address the provider last gave, verified or not. @example "alice@example.com" */
  readonly email: string | null;

  readonly linkedAt: Date;

  readonly lastUsedAt: Date | null;

  static from(identity: FederatedIdentity): IdentityResponseDto {
    return {
      id: identity.id,
      provider: identity.provider,
      subject: identity.subject,
      email: identity.email,
      linkedAt: identity.linkedAt,
      lastUsedAt: identity.lastUsedAt,
    };
  }
}

export class IdentitiesResponseDto {
  readonly identities: IdentityResponseDto[];
}

/** An identity as the lists show it, for the documents' examples. */
export const IDENTITY_RESPONSE_EXAMPLE = {
  id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
  provider: 'google',
  subject: '110169484474386276334',
  email: 'alice@example.com',
  linkedAt: '2026-01-01T00:00:00.000Z',
  lastUsedAt: '2026-01-02T08:30:00.000Z',
} as const;

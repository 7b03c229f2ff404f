import { IsUUID } from 'class-validator';

/** `{id}` and `{identityId}` of a linked identity's admin route. */
export class AdminIdentityParamsDto {
  /** The account's id (a UUID). */
  @IsUUID()
  readonly id: string;

  /** The linked identity's id (a UUID), as `GET /api/admin/users/{id}/identities` lists it. */
  @IsUUID()
  readonly identityId: string;
}

/** `{id}` of an account's identities route. */
export class AdminIdentitiesParamsDto {
  /** The account's id (a UUID). */
  @IsUUID()
  readonly id: string;
}

import { IsUUID } from 'class-validator';

/** `{id}` of an account route. */
export class AdminUserParamsDto {
  /** The account's id (a UUID). */
  @IsUUID()
  readonly id: string;
}

/** `{id}` and `{sessionId}` of a session route. */
export class AdminSessionParamsDto extends AdminUserParamsDto {
  /** The session's id (a UUID): the `sid` claim of its access tokens. */
  @IsUUID()
  readonly sessionId: string;
}

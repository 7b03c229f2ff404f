import { IsUUID } from 'class-validator';

/** `{id}` of the admin API's account route: the account's id (a UUID), as the other ones. */
export class OAuthGrantAccountParamsDto {
  /** The account's id (a UUID). */
  @IsUUID()
  readonly id: string;
}

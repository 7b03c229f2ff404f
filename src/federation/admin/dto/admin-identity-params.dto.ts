import { IsUUID } from 'class-validator';
import { AdminUserParamsDto } from '../../../admin/http/dto/admin-user-params.dto.js';

/** `{id}` and `{identityId}` of a linked identity's admin route. */
export class AdminIdentityParamsDto extends AdminUserParamsDto {
  /** The linked identity's id (a UUID), as `GET /api/admin/users/{id}/identities` lists it. */
  @IsUUID()
  readonly identityId: string;
}

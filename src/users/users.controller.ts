import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CurrentAccount } from './current-account.decorator.js';
import { USER_RESPONSE_EXAMPLE, UserResponseDto } from './dto/user-response.dto.js';
import { UsersService, type AccountState } from './users.service.js';

@ApiTags('auth')
@ApiBearerAuth()
@Controller('auth')
export class UsersController {
  constructor(private readonly usersService: UsersService) {}

  // Its 401 `Cuenta desactivada.` and 404 `Usuario no encontrado.` come from the global guard,
  // like every protected route's (see buildOpenApiDocument).
  /** The profile of the user the access token identifies. */
  @Get('me')
  @ApiOkResponse({
    description: 'The public profile of the account.',
    type: UserResponseDto,
    examples: { profile: { summary: 'The signed-in user', value: USER_RESPONSE_EXAMPLE } },
  })
  me(@CurrentAccount() account: AccountState): UserResponseDto {
    return this.usersService.profileOf(account);
  }
}

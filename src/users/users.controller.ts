import { Controller, Get, HttpStatus } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import {
  CurrentUser,
  type AccessTokenClaims,
} from '../common/decorators/current-user.decorator.js';
import { ApiErrorResponses } from '../common/swagger/api-error-responses.decorator.js';
import { USER_RESPONSE_EXAMPLE, UserResponseDto } from './dto/user-response.dto.js';
import { UsersMessages } from './users.messages.js';
import { UsersService } from './users.service.js';

@ApiTags('auth')
@ApiBearerAuth()
@Controller('auth')
export class UsersController {
  constructor(private readonly usersService: UsersService) {}

  /** The profile of the user the access token identifies. */
  @Get('me')
  @ApiOkResponse({
    description: 'The public profile of the account.',
    type: UserResponseDto,
    examples: { profile: { summary: 'The signed-in user', value: USER_RESPONSE_EXAMPLE } },
  })
  @ApiErrorResponses(
    { status: HttpStatus.UNAUTHORIZED, messages: { deactivated: UsersMessages.deactivated } },
    { status: HttpStatus.NOT_FOUND, messages: { notFound: UsersMessages.notFound } },
  )
  me(@CurrentUser() user: AccessTokenClaims): Promise<UserResponseDto> {
    return this.usersService.getProfile(user.sub);
  }
}

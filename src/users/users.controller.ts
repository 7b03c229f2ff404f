import { Controller, Get, HttpStatus } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from '../common/swagger/api-error-responses.decorator.js';
import { CurrentAccount } from './current-account.decorator.js';
import { UserResponseDto } from './dto/user-response.dto.js';
import type { User } from './entities/user.entity.js';
import { UsersMessages } from './users.messages.js';
import { UsersService } from './users.service.js';

@ApiTags('auth')
@ApiBearerAuth()
@Controller('auth')
export class UsersController {
  constructor(private readonly usersService: UsersService) {}

  /** The profile of the user the access token identifies. */
  @Get('me')
  @ApiErrorResponses(
    { status: HttpStatus.UNAUTHORIZED, messages: { deactivated: UsersMessages.deactivated } },
    { status: HttpStatus.NOT_FOUND, messages: { notFound: UsersMessages.notFound } },
  )
  me(@CurrentAccount() account: User): UserResponseDto {
    return this.usersService.profileOf(account);
  }
}

import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import {
  CurrentUser,
  type AccessTokenClaims,
} from '../common/decorators/current-user.decorator.js';
import { Origin } from '../common/decorators/origin.decorator.js';
import { Public } from '../common/decorators/public.decorator.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { ApiErrorResponses } from '../common/swagger/api-error-responses.decorator.js';
import type { MessageResponseDto } from '../tokens/dto/message-response.dto.js';
import { ChangePasswordDto } from './dto/change-password.dto.js';
import { ForgotPasswordDto } from './dto/forgot-password.dto.js';
import { ResetPasswordDto } from './dto/reset-password.dto.js';
import { PasswordChangeService } from './password-change.service.js';
import { PasswordResetService } from './password-reset.service.js';
import {
  answers,
  DEACTIVATED,
  MAIL_UNAVAILABLE,
  MAILED_TOKEN_REFUSED,
  PASSWORD_REFUSALS,
  USER_NOT_FOUND,
} from './password-route-responses.js';
import { PasswordsMessages } from './passwords.messages.js';

/** The password routes (additions): change, and reset through a mailed link. */
@ApiTags('auth')
@Controller('auth')
export class PasswordsController {
  constructor(
    private readonly passwordChange: PasswordChangeService,
    private readonly passwordReset: PasswordResetService,
  ) {}

  /** Changes the bearer's password; every other session ends. */
  @Post('password/change')
  @HttpCode(HttpStatus.OK)
  @ApiBearerAuth()
  @answers(
    200,
    "The password was changed at today's cost. Every other session of the account ended; the " +
      'session this access token names (its `sid` claim) continues.',
    { name: 'passwordChanged', message: PasswordsMessages.passwordChanged },
  )
  @ApiErrorResponses(
    {
      status: HttpStatus.BAD_REQUEST,
      messages: { samePassword: PasswordsMessages.samePassword },
    },
    PASSWORD_REFUSALS,
    USER_NOT_FOUND,
  )
  changePassword(
    @Body() body: ChangePasswordDto,
    @CurrentUser() user: AccessTokenClaims,
    @Origin() origin: RequestOrigin,
  ): Promise<MessageResponseDto> {
    return this.passwordChange.changePassword(user, body, origin);
  }

  /** Mails a reset link if an account has the address; the answer is the same either way. */
  @Public()
  @Post('password/forgot')
  @HttpCode(HttpStatus.ACCEPTED)
  @answers(
    202,
    'Accepted, whatever the address: if an active account has it, a reset link is mailed to it.',
    { name: 'resetRequested', message: PasswordsMessages.resetRequested },
  )
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, MAIL_UNAVAILABLE)
  forgotPassword(
    @Body() body: ForgotPasswordDto,
    @Origin() origin: RequestOrigin,
  ): Promise<MessageResponseDto> {
    return this.passwordReset.forgot(body, origin);
  }

  /** Sets a new password with the token of a reset link; every session ends. */
  @Public()
  @Post('password/reset')
  @HttpCode(HttpStatus.OK)
  @answers(200, 'The new password is set. Every session of the account ended.', {
    name: 'passwordReset',
    message: PasswordsMessages.passwordReset,
  })
  @ApiErrorResponses(MAILED_TOKEN_REFUSED, DEACTIVATED)
  resetPassword(
    @Body() body: ResetPasswordDto,
    @Origin() origin: RequestOrigin,
  ): Promise<MessageResponseDto> {
    return this.passwordReset.reset(body, origin);
  }
}

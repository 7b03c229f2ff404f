import { Body, Controller, Delete, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import {
  CurrentUser,
  type AccessTokenClaims,
} from '../common/decorators/current-user.decorator.js';
import { Origin } from '../common/decorators/origin.decorator.js';
import { Public } from '../common/decorators/public.decorator.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { ApiErrorResponses } from '../common/swagger/api-error-responses.decorator.js';
import {
  answers,
  DEACTIVATED,
  MAIL_UNAVAILABLE,
  MAILED_TOKEN_REFUSED,
  PASSWORD_REFUSALS,
  USER_NOT_FOUND,
} from '../passwords/password-route-responses.js';
import { MessageResponseDto } from '../tokens/dto/message-response.dto.js';
import { UsersMessages } from '../users/users.messages.js';
import { AccountMessages } from './account.messages.js';
import { AccountService } from './account.service.js';
import { ChangeEmailDto } from './dto/change-email.dto.js';
import { DeleteAccountDto } from './dto/delete-account.dto.js';
import { VerifyEmailDto } from './dto/verify-email.dto.js';
import { EmailVerificationService } from './email-verification.service.js';

/** The account routes (additions): addresses, deletion. */
@ApiTags('auth')
@Controller('auth')
export class AccountController {
  constructor(
    private readonly accountService: AccountService,
    private readonly emailVerification: EmailVerificationService,
  ) {}

  /** Proves an address with the token of a verification or e-mail change link. */
  @Public()
  @Post('email/verify')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({
    description:
      "The address is proven: now verified, or, from an e-mail change link, now the account's " +
      'address.',
    type: MessageResponseDto,
    examples: {
      emailVerified: {
        summary: AccountMessages.emailVerified,
        value: { message: AccountMessages.emailVerified },
      },
      emailChanged: {
        summary: AccountMessages.emailChanged,
        value: { message: AccountMessages.emailChanged },
      },
    },
  })
  @ApiErrorResponses(MAILED_TOKEN_REFUSED, DEACTIVATED, {
    status: HttpStatus.CONFLICT,
    messages: { emailTaken: UsersMessages.emailTaken },
  })
  verifyEmail(
    @Body() body: VerifyEmailDto,
    @Origin() origin: RequestOrigin,
  ): Promise<MessageResponseDto> {
    return this.emailVerification.verify(body, origin);
  }

  /** Mails another verification link to the bearer's address. */
  @Post('email/verify/resend')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiBearerAuth()
  @answers(
    202,
    "A new verification link will be mailed to the account's address (once per " +
      '`Mail__MinIntervalSeconds`).',
    { name: 'verificationRequested', message: AccountMessages.verificationRequested },
  )
  @ApiErrorResponses(
    DEACTIVATED,
    USER_NOT_FOUND,
    {
      status: HttpStatus.CONFLICT,
      messages: { emailAlreadyVerified: AccountMessages.emailAlreadyVerified },
    },
    MAIL_UNAVAILABLE,
  )
  resendVerification(
    @CurrentUser() user: AccessTokenClaims,
    @Origin() origin: RequestOrigin,
  ): Promise<MessageResponseDto> {
    return this.emailVerification.resend(user.sub, origin);
  }

  /** Mails a confirmation link to a new address, which replaces the old one once followed. */
  @Post('email/change')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiBearerAuth()
  @answers(
    202,
    "A confirmation link will be mailed to the new address; the account's address changes when " +
      'it is followed.',
    { name: 'emailChangeRequested', message: AccountMessages.emailChangeRequested },
  )
  @ApiErrorResponses(
    { status: HttpStatus.BAD_REQUEST, messages: { sameEmail: AccountMessages.sameEmail } },
    PASSWORD_REFUSALS,
    USER_NOT_FOUND,
    { status: HttpStatus.CONFLICT, messages: { emailTaken: UsersMessages.emailTaken } },
    MAIL_UNAVAILABLE,
  )
  changeEmail(
    @Body() body: ChangeEmailDto,
    @CurrentUser() user: AccessTokenClaims,
    @Origin() origin: RequestOrigin,
  ): Promise<MessageResponseDto> {
    return this.accountService.requestEmailChange(user.sub, body, origin);
  }

  /** Deletes the bearer's account, its sessions and its pending mails. */
  @Delete('me')
  @HttpCode(HttpStatus.OK)
  @ApiBearerAuth()
  @answers(200, 'The account, its sessions and its pending mails are deleted.', {
    name: 'accountDeleted',
    message: AccountMessages.accountDeleted,
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, PASSWORD_REFUSALS, USER_NOT_FOUND)
  deleteAccount(
    @Body() body: DeleteAccountDto,
    @CurrentUser() user: AccessTokenClaims,
    @Origin() origin: RequestOrigin,
  ): Promise<MessageResponseDto> {
    return this.accountService.deleteAccount(user.sub, body, origin);
  }
}

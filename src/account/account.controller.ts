import { Body, Controller, Delete, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import {
  CurrentUser,
  type AccessTokenClaims,
} from '../common/decorators/current-user.decorator.js';
import { Origin } from '../common/decorators/origin.decorator.js';
import { Public } from '../common/decorators/public.decorator.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { ApiErrorResponses } from '../common/swagger/api-error-responses.decorator.js';
import { MailMessages } from '../mail/mail.messages.js';
import { MessageResponseDto } from '../tokens/dto/message-response.dto.js';
import { UsersMessages } from '../users/users.messages.js';
import { AccountService } from './account.service.js';
import { AuthMessages } from '../auth/auth.messages.js';
import { ChangeEmailDto } from './dto/change-email.dto.js';
import { ChangePasswordDto } from '../passwords/dto/change-password.dto.js';
import { DeleteAccountDto } from './dto/delete-account.dto.js';
import { ForgotPasswordDto } from '../passwords/dto/forgot-password.dto.js';
import { ResetPasswordDto } from '../passwords/dto/reset-password.dto.js';
import { VerifyEmailDto } from './dto/verify-email.dto.js';
import { EmailVerificationService } from './email-verification.service.js';
import { FRESH_LOCKOUT_MINUTES } from '../passwords/lockout.js';
import { PasswordResetService } from '../passwords/password-reset.service.js';

/** A success answer: what it means, and its message as the one example. */
function answers(
  status: 200 | 202,
  description: string,
  example: { readonly name: string; readonly message: string },
): MethodDecorator {
  const options = {
    description,
    type: MessageResponseDto,
    examples: { [example.name]: { summary: example.message, value: { message: example.message } } },
  };
  return status === 200 ? ApiOkResponse(options) : ApiAcceptedResponse(options);
}

/** The refusals of a route that asks for the password again (PasswordConfirmation). */
const PASSWORD_REFUSALS = {
  status: HttpStatus.UNAUTHORIZED,
  messages: {
    invalidCredentials: AuthMessages.invalidCredentials,
    deactivated: UsersMessages.deactivated,
    lockedOut: AuthMessages.lockedOut(FRESH_LOCKOUT_MINUTES),
  },
} as const;
/** The refusal of a route that a deactivated account cannot use. */
const DEACTIVATED = {
  status: HttpStatus.UNAUTHORIZED,
  messages: { deactivated: UsersMessages.deactivated },
} as const;
/** A mailed link's token that is unknown, used, expired or replaced. */
const MAILED_TOKEN_REFUSED = {
  status: HttpStatus.BAD_REQUEST,
  messages: { mailedTokenInvalid: AuthMessages.mailedTokenInvalid },
} as const;
const USER_NOT_FOUND = {
  status: HttpStatus.NOT_FOUND,
  messages: { notFound: UsersMessages.notFound },
} as const;
const MAIL_UNAVAILABLE = {
  status: HttpStatus.SERVICE_UNAVAILABLE,
  messages: { mailUnavailable: MailMessages.unavailable },
} as const;

/** The account routes (additions): passwords, addresses, deletion. */
@ApiTags('auth')
@Controller('auth')
export class AccountController {
  constructor(
    private readonly accountService: AccountService,
    private readonly passwordReset: PasswordResetService,
    private readonly emailVerification: EmailVerificationService,
  ) {}

  /** Changes the bearer's password; every other session ends. */
  @Post('password/change')
  @HttpCode(HttpStatus.OK)
  @ApiBearerAuth()
  @answers(
    200,
    "The password was changed at today's cost. Every other session of the account ended; the " +
      'session this access token names (its `sid` claim) continues.',
    { name: 'passwordChanged', message: AuthMessages.passwordChanged },
  )
  @ApiErrorResponses(
    {
      status: HttpStatus.BAD_REQUEST,
      messages: { samePassword: AuthMessages.samePassword },
    },
    PASSWORD_REFUSALS,
    USER_NOT_FOUND,
  )
  changePassword(
    @Body() body: ChangePasswordDto,
    @CurrentUser() user: AccessTokenClaims,
    @Origin() origin: RequestOrigin,
  ): Promise<MessageResponseDto> {
    return this.accountService.changePassword(user, body, origin);
  }

  /** Mails a reset link if an account has the address; the answer is the same either way. */
  @Public()
  @Post('password/forgot')
  @HttpCode(HttpStatus.ACCEPTED)
  @answers(
    202,
    'Accepted, whatever the address: if an active account has it, a reset link is mailed to it.',
    { name: 'resetRequested', message: AuthMessages.resetRequested },
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
    message: AuthMessages.passwordReset,
  })
  @ApiErrorResponses(MAILED_TOKEN_REFUSED, DEACTIVATED)
  resetPassword(
    @Body() body: ResetPasswordDto,
    @Origin() origin: RequestOrigin,
  ): Promise<MessageResponseDto> {
    return this.passwordReset.reset(body, origin);
  }

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
        summary: AuthMessages.emailVerified,
        value: { message: AuthMessages.emailVerified },
      },
      emailChanged: {
        summary: AuthMessages.emailChanged,
        value: { message: AuthMessages.emailChanged },
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
    { name: 'verificationRequested', message: AuthMessages.verificationRequested },
  )
  @ApiErrorResponses(
    DEACTIVATED,
    USER_NOT_FOUND,
    {
      status: HttpStatus.CONFLICT,
      messages: { emailAlreadyVerified: AuthMessages.emailAlreadyVerified },
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
    { name: 'emailChangeRequested', message: AuthMessages.emailChangeRequested },
  )
  @ApiErrorResponses(
    { status: HttpStatus.BAD_REQUEST, messages: { sameEmail: AuthMessages.sameEmail } },
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
    message: AuthMessages.accountDeleted,
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

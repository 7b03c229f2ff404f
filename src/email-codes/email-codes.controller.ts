import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { PasswordsMessages } from '../passwords/passwords.messages.js';
import { FRESH_LOCKOUT_MINUTES } from '../passwords/lockout.js';
import { Origin } from '../common/decorators/origin.decorator.js';
import { Public } from '../common/decorators/public.decorator.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { ApiErrorResponses } from '../common/swagger/api-error-responses.decorator.js';
import { MfaMessages } from '../two-factor/mfa.messages.js';
import { AUTH_RESPONSE_EXAMPLE, AuthResponseDto } from '../tokens/dto/auth-response.dto.js';
import { MessageResponseDto } from '../tokens/dto/message-response.dto.js';
import { UsersMessages } from '../users/users.messages.js';
import { EmailCodeLoginDto } from './dto/email-code-login.dto.js';
import { SendEmailCodeDto } from './dto/send-email-code.dto.js';
import { EmailCodesMessages } from './email-codes.messages.js';
import { EmailCodesService } from './email-codes.service.js';

/** Both routes answer 404 while EmailCode__Enabled is off. */
const DISABLED = {
  status: HttpStatus.NOT_FOUND,
  messages: { emailCodeDisabled: EmailCodesMessages.disabled },
} as const;

@ApiTags('auth')
@Controller('auth/email-code')
export class EmailCodesController {
  constructor(private readonly emailCodes: EmailCodesService) {}

  /** Mails a sign-in code and link if an account has the address; the answer is the same either way. */
  @Public()
  @Post('send')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiAcceptedResponse({
    description:
      'Accepted, whatever the address: if an active account has it, a code and a link are mailed to it.',
    type: MessageResponseDto,
    examples: {
      codeRequested: {
        summary: EmailCodesMessages.codeRequested,
        value: { message: EmailCodesMessages.codeRequested },
      },
    },
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, DISABLED)
  sendEmailCode(
    @Body() body: SendEmailCodeDto,
    @Origin() origin: RequestOrigin,
  ): Promise<MessageResponseDto> {
    return this.emailCodes.send(body, origin);
  }

  /** Signs in with the mailed code (or the link's token), and the second factor's code where the account has one. */
  @Public()
  @Post('login')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({
    description: 'Signed in: a new session and its first token pair, as login answers.',
    type: AuthResponseDto,
    examples: { signedIn: { summary: 'A new session', value: AUTH_RESPONSE_EXAMPLE } },
  })
  @ApiErrorResponses(
    HttpStatus.BAD_REQUEST,
    {
      status: HttpStatus.UNAUTHORIZED,
      messages: {
        emailCodeInvalid: EmailCodesMessages.invalidCode,
        deactivated: UsersMessages.deactivated,
        lockedOut: PasswordsMessages.lockedOut(FRESH_LOCKOUT_MINUTES),
        codeRequired: MfaMessages.codeRequired,
        invalidCode: MfaMessages.invalidCode,
      },
    },
    DISABLED,
    {
      status: HttpStatus.SERVICE_UNAVAILABLE,
      messages: { mfaUnavailable: MfaMessages.unavailable },
    },
  )
  loginWithEmailCode(
    @Body() body: EmailCodeLoginDto,
    @Origin() origin: RequestOrigin,
  ): Promise<AuthResponseDto> {
    return this.emailCodes.login(body, origin);
  }
}

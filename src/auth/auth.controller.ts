import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { Origin } from '../common/decorators/origin.decorator.js';
import { Public } from '../common/decorators/public.decorator.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { ApiErrorResponses } from '../common/swagger/api-error-responses.decorator.js';
import { AUTH_RESPONSE_EXAMPLE, AuthResponseDto } from '../tokens/dto/auth-response.dto.js';
import { MfaMessages } from '../two-factor/mfa.messages.js';
import { UsersMessages } from '../users/users.messages.js';
import { PasswordsMessages } from '../passwords/passwords.messages.js';
import { AuthService } from './auth.service.js';
import { LoginDto } from './dto/login.dto.js';
import { RegisterDto } from './dto/register.dto.js';
import { FRESH_LOCKOUT_MINUTES } from '../passwords/lockout.js';

@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(private readonly authService: AuthService) {}

  /** Creates an account and signs it in. */
  @Public()
  @Post('register')
  @HttpCode(HttpStatus.CREATED)
  @ApiCreatedResponse({
    description: 'The account was created and a session started: the first token pair.',
    type: AuthResponseDto,
    examples: { registered: { summary: 'A new account', value: AUTH_RESPONSE_EXAMPLE } },
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, {
    status: HttpStatus.CONFLICT,
    messages: { emailTaken: UsersMessages.emailTaken },
  })
  register(@Body() body: RegisterDto, @Origin() origin: RequestOrigin): Promise<AuthResponseDto> {
    return this.authService.register(body, origin);
  }

  /** Signs in with e-mail and password, and the second factor's code where the account has one. */
  @Public()
  @Post('login')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({
    description: 'Signed in: a new session and its first token pair.',
    type: AuthResponseDto,
    examples: { signedIn: { summary: 'A new session', value: AUTH_RESPONSE_EXAMPLE } },
  })
  @ApiErrorResponses(
    HttpStatus.BAD_REQUEST,
    {
      status: HttpStatus.UNAUTHORIZED,
      messages: {
        invalidCredentials: PasswordsMessages.invalidCredentials,
        deactivated: UsersMessages.deactivated,
        lockedOut: PasswordsMessages.lockedOut(FRESH_LOCKOUT_MINUTES),
        emailNotVerified: UsersMessages.emailNotVerified,
        codeRequired: MfaMessages.codeRequired,
        invalidCode: MfaMessages.invalidCode,
      },
    },
    {
      status: HttpStatus.SERVICE_UNAVAILABLE,
      messages: { mfaUnavailable: MfaMessages.unavailable },
    },
  )
  login(@Body() body: LoginDto, @Origin() origin: RequestOrigin): Promise<AuthResponseDto> {
    return this.authService.login(body, origin);
  }
}

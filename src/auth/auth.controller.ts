import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Origin } from '../common/decorators/origin.decorator.js';
import { Public } from '../common/decorators/public.decorator.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { ApiErrorResponses } from '../common/swagger/api-error-responses.decorator.js';
import { AuthResponseDto } from '../tokens/dto/auth-response.dto.js';
import { UsersMessages } from '../users/users.messages.js';
import { AuthMessages } from './auth.messages.js';
import { AuthService } from './auth.service.js';
import { LoginDto } from './dto/login.dto.js';
import { RegisterDto } from './dto/register.dto.js';
import { LOCKOUT_DURATION_MS } from './lockout.js';

/** Spec §4.2: what a login right after a lockout starts is told to wait. */
const FRESH_LOCKOUT_MINUTES = LOCKOUT_DURATION_MS / 60_000;

@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(private readonly authService: AuthService) {}

  /** Creates an account and signs it in. */
  @Public()
  @Post('register')
  @HttpCode(HttpStatus.CREATED)
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, {
    status: HttpStatus.CONFLICT,
    messages: { emailTaken: UsersMessages.emailTaken },
  })
  register(@Body() body: RegisterDto, @Origin() origin: RequestOrigin): Promise<AuthResponseDto> {
    return this.authService.register(body, origin);
  }

  /** Signs in with e-mail and password. */
  @Public()
  @Post('login')
  @HttpCode(HttpStatus.OK)
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, {
    status: HttpStatus.UNAUTHORIZED,
    messages: {
      invalidCredentials: AuthMessages.invalidCredentials,
      deactivated: UsersMessages.deactivated,
      lockedOut: AuthMessages.lockedOut(FRESH_LOCKOUT_MINUTES),
    },
  })
  login(@Body() body: LoginDto, @Origin() origin: RequestOrigin): Promise<AuthResponseDto> {
    return this.authService.login(body, origin);
  }
}

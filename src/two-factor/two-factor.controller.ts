import { Body, Controller, HttpCode, HttpStatus, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import {
  CurrentUser,
  type AccessTokenClaims,
} from '../common/decorators/current-user.decorator.js';
import { Origin } from '../common/decorators/origin.decorator.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { ApiErrorResponses } from '../common/swagger/api-error-responses.decorator.js';
import { MfaMessages } from './mfa.messages.js';
import { MessageResponseDto } from '../tokens/dto/message-response.dto.js';
import { UsersMessages } from '../users/users.messages.js';
import { PasswordsMessages } from '../passwords/passwords.messages.js';
import { DisableTotpDto } from './dto/disable-totp.dto.js';
import { EnrollTotpDto } from './dto/enroll-totp.dto.js';
import { RecoveryCodesResponseDto } from './dto/recovery-codes-response.dto.js';
import { TotpCodeDto } from './dto/totp-code.dto.js';
import { TotpEnrolmentResponseDto } from './dto/totp-enrolment-response.dto.js';
import { FRESH_LOCKOUT_MINUTES } from '../passwords/lockout.js';
import { TwoFactorService } from './two-factor.service.js';

const USER_NOT_FOUND = {
  status: HttpStatus.NOT_FOUND,
  messages: { notFound: UsersMessages.notFound },
} as const;
const NOT_CONFIGURED = {
  status: HttpStatus.SERVICE_UNAVAILABLE,
  messages: { mfaUnavailable: MfaMessages.unavailable },
} as const;
/** A password or code refused as a login refuses it. */
const REFUSALS = {
  invalidCredentials: PasswordsMessages.invalidCredentials,
  invalidCode: MfaMessages.invalidCode,
  deactivated: UsersMessages.deactivated,
  lockedOut: PasswordsMessages.lockedOut(FRESH_LOCKOUT_MINUTES),
} as const;
/** A code refused, on the routes that take a code without a password. */
const CODE_REFUSED = {
  status: HttpStatus.UNAUTHORIZED,
  messages: {
    invalidCode: REFUSALS.invalidCode,
    deactivated: REFUSALS.deactivated,
    lockedOut: REFUSALS.lockedOut,
  },
} as const;
const ENROLMENT_EXAMPLE = {
  secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
  otpauthUri:
    'otpauth://totp/Keygate:alice%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP' +
    '&issuer=Keygate&algorithm=SHA1&digits=6&period=30',
  qrCode: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA...',
} as const;
const RECOVERY_CODES_EXAMPLE = {
  recoveryCodes: ['7k2mq-x9d4r', 'p3vhn-0wct8', '...'],
} as const;

/** The TOTP second factor (beyond the interface); see docs/two-factor.md. */
@ApiTags('auth')
@Controller('auth')
export class TwoFactorController {
  constructor(private readonly twoFactor: TwoFactorService) {}

  /** Starts turning on TOTP: a new secret, pending until a code confirms it. */
  @Post('mfa/totp/enroll')
  @HttpCode(HttpStatus.OK)
  @ApiBearerAuth()
  @ApiOkResponse({
    description:
      'A new secret, as text, as an otpauth URI and as a QR code, shown only here. Nothing ' +
      'changes at login until POST /api/auth/mfa/totp/confirm accepts a code of it.',
    type: TotpEnrolmentResponseDto,
    examples: { pending: { summary: 'A pending factor', value: ENROLMENT_EXAMPLE } },
  })
  @ApiErrorResponses(
    HttpStatus.BAD_REQUEST,
    {
      status: HttpStatus.UNAUTHORIZED,
      messages: {
        invalidCredentials: REFUSALS.invalidCredentials,
        deactivated: REFUSALS.deactivated,
        lockedOut: REFUSALS.lockedOut,
      },
    },
    USER_NOT_FOUND,
    { status: HttpStatus.CONFLICT, messages: { alreadyEnabled: MfaMessages.alreadyEnabled } },
    NOT_CONFIGURED,
  )
  enrollTotp(
    @Body() body: EnrollTotpDto,
    @CurrentUser() user: AccessTokenClaims,
    @Origin() origin: RequestOrigin,
  ): Promise<TotpEnrolmentResponseDto> {
    return this.twoFactor.enroll(user.sub, body, origin);
  }

  /** Turns TOTP on with a first code; every other session ends. */
  @Post('mfa/totp/confirm')
  @HttpCode(HttpStatus.OK)
  @ApiBearerAuth()
  @ApiOkResponse({
    description:
      'TOTP is on: logins now need a code. Ten recovery codes, shown only here. Every other ' +
      'session of the account ended; the one this access token names (`sid`) continues.',
    type: RecoveryCodesResponseDto,
    examples: { recoveryCodes: { summary: 'Ten codes', value: RECOVERY_CODES_EXAMPLE } },
  })
  @ApiErrorResponses(
    HttpStatus.BAD_REQUEST,
    CODE_REFUSED,
    USER_NOT_FOUND,
    { status: HttpStatus.CONFLICT, messages: { notPending: MfaMessages.notPending } },
    NOT_CONFIGURED,
  )
  confirmTotp(
    @Body() body: TotpCodeDto,
    @CurrentUser() user: AccessTokenClaims,
    @Origin() origin: RequestOrigin,
  ): Promise<RecoveryCodesResponseDto> {
    return this.twoFactor.confirm(user, body, origin);
  }

  /** Ten new recovery codes in place of the old ones. */
  @Post('mfa/totp/recovery-codes')
  @HttpCode(HttpStatus.OK)
  @ApiBearerAuth()
  @ApiOkResponse({
    description: 'Ten new recovery codes, shown only here; the earlier ones no longer work.',
    type: RecoveryCodesResponseDto,
    examples: { recoveryCodes: { summary: 'Ten codes', value: RECOVERY_CODES_EXAMPLE } },
  })
  @ApiErrorResponses(
    HttpStatus.BAD_REQUEST,
    CODE_REFUSED,
    USER_NOT_FOUND,
    { status: HttpStatus.CONFLICT, messages: { notEnabled: MfaMessages.notEnabled } },
    NOT_CONFIGURED,
  )
  replaceRecoveryCodes(
    @Body() body: TotpCodeDto,
    @CurrentUser() user: AccessTokenClaims,
    @Origin() origin: RequestOrigin,
  ): Promise<RecoveryCodesResponseDto> {
    return this.twoFactor.replaceRecoveryCodes(user.sub, body, origin);
  }

  /** Turns TOTP off, for the password and a code. */
  @Post('mfa/totp/disable')
  @HttpCode(HttpStatus.OK)
  @ApiBearerAuth()
  @ApiOkResponse({
    description:
      'TOTP is off and its recovery codes are gone: logins need the password only. Sessions ' +
      'continue.',
    type: MessageResponseDto,
    examples: {
      disabled: { summary: MfaMessages.disabled, value: { message: MfaMessages.disabled } },
    },
  })
  @ApiErrorResponses(
    HttpStatus.BAD_REQUEST,
    { status: HttpStatus.UNAUTHORIZED, messages: REFUSALS },
    USER_NOT_FOUND,
    { status: HttpStatus.CONFLICT, messages: { notEnabled: MfaMessages.notEnabled } },
    NOT_CONFIGURED,
  )
  disableTotp(
    @Body() body: DisableTotpDto,
    @CurrentUser() user: AccessTokenClaims,
    @Origin() origin: RequestOrigin,
  ): Promise<MessageResponseDto> {
    return this.twoFactor.disable(user.sub, body, origin);
  }
}

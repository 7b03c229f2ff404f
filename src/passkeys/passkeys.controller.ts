import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Patch,
  Post,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiTags,
} from '@nestjs/swagger';
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server';
import { PasswordsMessages } from '../passwords/passwords.messages.js';
import { FRESH_LOCKOUT_MINUTES } from '../passwords/lockout.js';
import {
  CurrentUser,
  type AccessTokenClaims,
} from '../common/decorators/current-user.decorator.js';
import { Origin } from '../common/decorators/origin.decorator.js';
import { Public } from '../common/decorators/public.decorator.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { ApiErrorResponses } from '../common/swagger/api-error-responses.decorator.js';
import { AUTH_RESPONSE_EXAMPLE, AuthResponseDto } from '../tokens/dto/auth-response.dto.js';
import { UsersMessages } from '../users/users.messages.js';
import {
  CREATION_OPTIONS_EXAMPLE,
  REQUEST_OPTIONS_EXAMPLE,
  PasskeyCreationOptionsResponseDto,
  PasskeyRequestOptionsResponseDto,
} from './dto/passkey-options-response.dto.js';
import { PasskeyLoginDto } from './dto/passkey-login.dto.js';
import { PasskeyRegistrationOptionsDto } from './dto/passkey-registration-options.dto.js';
import {
  PASSKEY_RESPONSE_EXAMPLE,
  PasskeyListResponseDto,
  PasskeyResponseDto,
} from './dto/passkey-response.dto.js';
import { RegisterPasskeyDto } from './dto/register-passkey.dto.js';
import { RenamePasskeyDto } from './dto/rename-passkey.dto.js';
import { PasskeyFlowsService } from './passkey-flows.service.js';
import { PasskeysMessages } from './passkeys.messages.js';

const NOT_CONFIGURED = {
  status: HttpStatus.SERVICE_UNAVAILABLE,
  messages: { passkeysUnavailable: PasskeysMessages.unavailable },
} as const;
const NOT_FOUND = {
  status: HttpStatus.NOT_FOUND,
  messages: { passkeyNotFound: PasskeysMessages.notFound },
} as const;
/** An assertion refused, wherever one is checked. */
const ASSERTION_REFUSALS = {
  challengeInvalid: PasskeysMessages.challengeInvalid,
  verificationFailed: PasskeysMessages.verificationFailed,
  unknownPasskey: PasskeysMessages.unknownPasskey,
  counterRegressed: PasskeysMessages.counterRegressed,
} as const;

/**
 * Passkeys (beyond the interface); see docs/passkeys.md. Their ceremonies and storage are the
 * passkeys module's; the routes are here, as TOTP's are, since adding one asks for the password.
 */
@ApiTags('passkeys')
@Controller('auth/passkeys')
export class PasskeysController {
  constructor(private readonly flows: PasskeyFlowsService) {}

  /** Creation options for a new passkey, after a recent proof: the password or a passkey. */
  @Post('register/options')
  @HttpCode(HttpStatus.OK)
  @ApiBearerAuth()
  @ApiOkResponse({
    description:
      'WebAuthn creation options (JSON form) for `navigator.credentials.create()`; the ' +
      'challenge is valid once, for five minutes, for this account.',
    type: PasskeyCreationOptionsResponseDto,
    examples: { options: { summary: 'Creation options', value: CREATION_OPTIONS_EXAMPLE } },
  })
  @ApiErrorResponses(
    {
      status: HttpStatus.BAD_REQUEST,
      messages: {
        proofRequired: PasskeysMessages.proofRequired,
        proofAmbiguous: PasskeysMessages.proofAmbiguous,
      },
    },
    {
      status: HttpStatus.UNAUTHORIZED,
      messages: {
        invalidCredentials: PasswordsMessages.invalidCredentials,
        deactivated: UsersMessages.deactivated,
        lockedOut: PasswordsMessages.lockedOut(FRESH_LOCKOUT_MINUTES),
        ...ASSERTION_REFUSALS,
      },
    },
    { status: HttpStatus.NOT_FOUND, messages: { notFound: UsersMessages.notFound } },
    NOT_CONFIGURED,
  )
  passkeyRegistrationOptions(
    @Body() body: PasskeyRegistrationOptionsDto,
    @CurrentUser() user: AccessTokenClaims,
    @Origin() origin: RequestOrigin,
  ): Promise<PublicKeyCredentialCreationOptionsJSON> {
    return this.flows.registrationOptions(user.sub, body, origin);
  }

  /** Verifies the browser's new credential and stores it. */
  @Post('register/verify')
  @HttpCode(HttpStatus.CREATED)
  @ApiBearerAuth()
  @ApiCreatedResponse({
    description: 'The new passkey.',
    type: PasskeyResponseDto,
    examples: {
      passkey: {
        summary: 'A new passkey',
        value: { ...PASSKEY_RESPONSE_EXAMPLE, name: 'Llave de acceso', lastUsedAt: null },
      },
    },
  })
  @ApiErrorResponses(
    {
      status: HttpStatus.BAD_REQUEST,
      messages: {
        challengeInvalid: PasskeysMessages.challengeInvalid,
        verificationFailed: PasskeysMessages.verificationFailed,
      },
    },
    HttpStatus.UNAUTHORIZED,
    {
      status: HttpStatus.CONFLICT,
      messages: {
        alreadyRegistered: PasskeysMessages.alreadyRegistered,
        tooMany: PasskeysMessages.tooMany,
      },
    },
    NOT_CONFIGURED,
  )
  registerPasskey(
    @Body() body: RegisterPasskeyDto,
    @CurrentUser() user: AccessTokenClaims,
    @Origin() origin: RequestOrigin,
  ): Promise<PasskeyResponseDto> {
    return this.flows.register(user.sub, body, origin);
  }

  /** The bearer's passkeys, oldest first. */
  @Get()
  @ApiBearerAuth()
  @ApiOkResponse({
    description: "The bearer's passkeys, oldest first.",
    type: PasskeyListResponseDto,
    examples: {
      passkeys: { summary: 'One passkey', value: { passkeys: [PASSKEY_RESPONSE_EXAMPLE] } },
    },
  })
  @ApiErrorResponses(HttpStatus.UNAUTHORIZED, NOT_CONFIGURED)
  listPasskeys(@CurrentUser() user: AccessTokenClaims): Promise<PasskeyListResponseDto> {
    return this.flows.list(user.sub);
  }

  /** Renames one of the bearer's passkeys. */
  @Patch(':id')
  @HttpCode(HttpStatus.OK)
  @ApiBearerAuth()
  @ApiOkResponse({
    description: 'The renamed passkey.',
    type: PasskeyResponseDto,
    examples: { renamed: { summary: 'Renamed', value: PASSKEY_RESPONSE_EXAMPLE } },
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, HttpStatus.UNAUTHORIZED, NOT_FOUND, NOT_CONFIGURED)
  renamePasskey(
    @Param('id') id: string,
    @Body() body: RenamePasskeyDto,
    @CurrentUser() user: AccessTokenClaims,
    @Origin() origin: RequestOrigin,
  ): Promise<PasskeyResponseDto> {
    return this.flows.rename(user.sub, id, body.name, origin);
  }

  /** Removes one of the bearer's passkeys: it signs in nowhere from now on. */
  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiBearerAuth()
  @ApiNoContentResponse({ description: 'Removed.' })
  @ApiErrorResponses(HttpStatus.UNAUTHORIZED, NOT_FOUND, NOT_CONFIGURED)
  removePasskey(
    @Param('id') id: string,
    @CurrentUser() user: AccessTokenClaims,
    @Origin() origin: RequestOrigin,
  ): Promise<void> {
    return this.flows.remove(user.sub, id, origin);
  }

  /** Request options for a sign-in with a passkey, or for a passkey as a second factor or proof. */
  @Public()
  @Post('login/options')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({
    description:
      'WebAuthn request options (JSON form) for `navigator.credentials.get()`, with ' +
      '`mediation: "conditional"` for autofill; the challenge is valid once, for five minutes.',
    type: PasskeyRequestOptionsResponseDto,
    examples: { options: { summary: 'Request options', value: REQUEST_OPTIONS_EXAMPLE } },
  })
  @ApiErrorResponses(NOT_CONFIGURED)
  passkeyLoginOptions(): Promise<PublicKeyCredentialRequestOptionsJSON> {
    return this.flows.loginOptions();
  }

  /** Signs in with a passkey alone: the interface's auth response. */
  @Public()
  @Post('login/verify')
  @HttpCode(HttpStatus.OK)
  @ApiOkResponse({
    description: 'Signed in: the auth response of login.',
    type: AuthResponseDto,
    examples: { signedIn: { summary: 'A new session', value: AUTH_RESPONSE_EXAMPLE } },
  })
  @ApiErrorResponses(
    HttpStatus.BAD_REQUEST,
    {
      status: HttpStatus.UNAUTHORIZED,
      messages: {
        ...ASSERTION_REFUSALS,
        deactivated: UsersMessages.deactivated,
        emailNotVerified: UsersMessages.emailNotVerified,
      },
    },
    NOT_CONFIGURED,
  )
  loginWithPasskey(
    @Body() body: PasskeyLoginDto,
    @Origin() origin: RequestOrigin,
  ): Promise<AuthResponseDto> {
    return this.flows.login(body, origin);
  }
}

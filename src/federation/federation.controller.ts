import {
  Body,
  Controller,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Post,
  Query,
  Redirect,
} from '@nestjs/common';
import { ApiBearerAuth, ApiFoundResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequiresSetting } from '../common/swagger/requires-setting.decorator.js';
import {
  CurrentUser,
  type AccessTokenClaims,
} from '../common/decorators/current-user.decorator.js';
import { Origin } from '../common/decorators/origin.decorator.js';
import { Public } from '../common/decorators/public.decorator.js';
import type { RequestOrigin } from '../common/request-origin/request-origin.js';
import { ApiErrorResponses } from '../common/swagger/api-error-responses.decorator.js';
import { FRESH_LOCKOUT_MINUTES } from '../passwords/lockout.js';
import { PasskeysMessages } from '../passkeys/passkeys.messages.js';
import { PasswordsMessages } from '../passwords/passwords.messages.js';
import { AUTH_RESPONSE_EXAMPLE, AuthResponseDto } from '../tokens/dto/auth-response.dto.js';
import { MfaMessages } from '../two-factor/mfa.messages.js';
import { UsersMessages } from '../users/users.messages.js';
import { AuthorizeQueryDto } from './dto/authorize-query.dto.js';
import { FederationTokenDto } from './dto/federation-token.dto.js';
import { LinkIdentityDto } from './dto/link-identity.dto.js';
import { LinkResponseDto } from './dto/link-response.dto.js';
import { ProvidersResponseDto } from './dto/providers-response.dto.js';
import { FederationMessages } from './federation.messages.js';
import { FederationService } from './federation.service.js';

/** A redirect's target, as Nest's @Redirect() takes it from the handler. */
export interface RedirectTarget {
  readonly url: string;
  readonly statusCode: number;
}

const UNKNOWN_PROVIDER = {
  status: HttpStatus.NOT_FOUND,
  messages: { unknownProvider: FederationMessages.unknownProvider },
} as const;

/** Sign-in through other identity providers; mounted only while Federation__Providers is set. */
@RequiresSetting('Federation__Providers')
@ApiTags('federation')
@Controller('auth/federation')
export class FederationController {
  constructor(private readonly federation: FederationService) {}

  /** The providers people may sign in with. */
  @Public()
  @Get('providers')
  @ApiOkResponse({
    description: 'The configured providers, in the order of Federation__Providers.',
    type: ProvidersResponseDto,
    examples: {
      providers: {
        summary: 'Two providers',
        value: {
          providers: [
            { id: 'google', name: 'Google' },
            { id: 'github', name: 'GitHub' },
          ],
        },
      },
    },
  })
  listFederationProviders(): ProvidersResponseDto {
    return this.federation.listProviders();
  }

  /** Sends the browser to the provider, with PKCE, state and (OpenID Connect) nonce. */
  @Public()
  @Get(':provider/authorize')
  @Redirect()
  @ApiFoundResponse({ description: 'To the provider’s authorization endpoint.' })
  @ApiErrorResponses(
    {
      status: HttpStatus.BAD_REQUEST,
      messages: { redirectNotAllowed: FederationMessages.redirectNotAllowed },
    },
    UNKNOWN_PROVIDER,
    {
      status: HttpStatus.SERVICE_UNAVAILABLE,
      messages: { providerUnavailable: FederationMessages.providerUnavailable },
    },
  )
  async authorizeWithProvider(
    @Param('provider') provider: string,
    @Query() query: AuthorizeQueryDto,
  ): Promise<RedirectTarget> {
    return { url: await this.federation.authorize(provider, query), statusCode: HttpStatus.FOUND };
  }

  /** The URL registered at the provider: back to the flow's `redirectTo` with `code` or `error`. */
  @Public()
  @Get(':provider/callback')
  @Redirect()
  @ApiFoundResponse({
    description: 'To the flow’s redirectTo, with `?code=`, `?linked=` or `?error=`.',
  })
  @ApiErrorResponses(
    { status: HttpStatus.BAD_REQUEST, messages: { invalidFlow: FederationMessages.invalidFlow } },
    UNKNOWN_PROVIDER,
  )
  async completeProviderSignIn(
    @Param('provider') provider: string,
    @Query() query: Record<string, unknown>,
    @Origin() origin: RequestOrigin,
  ): Promise<RedirectTarget> {
    return {
      url: await this.federation.callback(provider, query, origin),
      statusCode: HttpStatus.FOUND,
    };
  }

  /** Exchanges the one-time code, with the verifier of its challenge, for a session. */
  @Public()
  @Post('token')
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
        federationCodeInvalid: FederationMessages.invalidCode,
        deactivated: UsersMessages.deactivated,
        lockedOut: PasswordsMessages.lockedOut(FRESH_LOCKOUT_MINUTES),
        codeRequired: MfaMessages.codeRequired,
        invalidCode: MfaMessages.invalidCode,
        passkeyChallengeInvalid: PasskeysMessages.challengeInvalid,
        passkeyVerificationFailed: PasskeysMessages.verificationFailed,
        passkeyUnknown: PasskeysMessages.unknownPasskey,
        passkeyCounterRegressed: PasskeysMessages.counterRegressed,
      },
    },
    {
      status: HttpStatus.SERVICE_UNAVAILABLE,
      messages: { mfaUnavailable: MfaMessages.unavailable },
    },
  )
  exchangeFederationCode(
    @Body() body: FederationTokenDto,
    @Origin() origin: RequestOrigin,
  ): Promise<AuthResponseDto> {
    return this.federation.exchange(body, origin);
  }

  /** Starts linking an identity at the provider to the signed-in account (password confirmed). */
  @Post(':provider/link')
  @HttpCode(HttpStatus.OK)
  @ApiBearerAuth()
  @ApiOkResponse({
    description: 'Where to send the browser: the provider, for this link flow.',
    type: LinkResponseDto,
    examples: {
      authorizeUrl: {
        summary: 'The provider’s authorization URL',
        value: {
          authorizeUrl:
            'https://accounts.google.com/o/oauth2/v2/auth?client_id=keygate&response_type=code&state=…',
        },
      },
    },
  })
  @ApiErrorResponses(
    {
      status: HttpStatus.BAD_REQUEST,
      messages: { redirectNotAllowed: FederationMessages.redirectNotAllowed },
    },
    {
      status: HttpStatus.UNAUTHORIZED,
      messages: {
        invalidCredentials: PasswordsMessages.invalidCredentials,
        deactivated: UsersMessages.deactivated,
        lockedOut: PasswordsMessages.lockedOut(FRESH_LOCKOUT_MINUTES),
      },
    },
    UNKNOWN_PROVIDER,
    {
      status: HttpStatus.SERVICE_UNAVAILABLE,
      messages: { providerUnavailable: FederationMessages.providerUnavailable },
    },
  )
  linkIdentity(
    @Param('provider') provider: string,
    @Body() body: LinkIdentityDto,
    @CurrentUser() user: AccessTokenClaims,
    @Origin() origin: RequestOrigin,
  ): Promise<LinkResponseDto> {
    return this.federation.startLink(user.sub, provider, body, origin);
  }
}

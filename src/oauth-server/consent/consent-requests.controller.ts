import { Controller, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { AdminRoute } from '../../common/admin-route/admin-scope.decorator.js';
import { Origin } from '../../common/decorators/origin.decorator.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import { OAuthServerMessages } from '../oauth-server.messages.js';
import { ConsentRequestsService } from './consent-requests.service.js';
import {
  ConsentChallengeParamsDto,
  ConsentDecisionResponseDto,
  ConsentRequestResponseDto,
} from './dto/consent-request.dto.js';
import { RequiresSetting } from '../../common/swagger/requires-setting.decorator.js';

const UNKNOWN_REQUEST = {
  status: HttpStatus.NOT_FOUND,
  messages: { unknownConsentRequest: OAuthServerMessages.unknownConsentRequest },
};

/**
 * The consent API of a team's own consent page (OAuthServer__ConsentUrl,
 * docs/operations/oauth-server.md): its server reads the request and sends the person's decision
 * with an admin API key. Mounted only while OAuthServer__Enabled is true.
 */
@RequiresSetting('OAuthServer__Enabled')
@ApiTags('admin')
@Controller('admin/oauth/consent-requests')
export class ConsentRequestsController {
  constructor(private readonly consentRequests: ConsentRequestsService) {}

  /** The pending request: the client, the account and what is asked. */
  @Get(':challenge')
  @AdminRoute('oauth-consents:read', HttpStatus.BAD_REQUEST, UNKNOWN_REQUEST)
  @ApiOkResponse({ type: ConsentRequestResponseDto })
  readConsentRequest(
    @Param() params: ConsentChallengeParamsDto,
  ): Promise<ConsentRequestResponseDto> {
    return this.consentRequests.read(params.challenge);
  }

  /** The person approved: what is asked is granted and remembered. */
  @Post(':challenge/approve')
  @HttpCode(HttpStatus.OK)
  @AdminRoute('oauth-consents:write', HttpStatus.BAD_REQUEST, UNKNOWN_REQUEST)
  @ApiOkResponse({ type: ConsentDecisionResponseDto })
  approveConsentRequest(
    @Param() params: ConsentChallengeParamsDto,
    @Origin() origin: RequestOrigin,
  ): Promise<ConsentDecisionResponseDto> {
    return this.consentRequests.approve(params.challenge, origin);
  }

  /** The person refused: the application gets `access_denied`. */
  @Post(':challenge/deny')
  @HttpCode(HttpStatus.OK)
  @AdminRoute('oauth-consents:write', HttpStatus.BAD_REQUEST, UNKNOWN_REQUEST)
  @ApiOkResponse({ type: ConsentDecisionResponseDto })
  denyConsentRequest(
    @Param() params: ConsentChallengeParamsDto,
    @Origin() origin: RequestOrigin,
  ): Promise<ConsentDecisionResponseDto> {
    return this.consentRequests.deny(params.challenge, origin);
  }
}

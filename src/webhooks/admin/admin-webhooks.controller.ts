import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AdminPrincipal } from '../../common/admin-route/current-admin.decorator.js';
import { Origin } from '../../common/decorators/origin.decorator.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import { WebhooksMessages } from '../webhooks.messages.js';
import { WebhooksAdminService } from './webhooks-admin.service.js';
import { AdminRoute } from '../../common/admin-route/admin-scope.decorator.js';
import { CurrentAdminKey } from '../../common/admin-route/current-admin.decorator.js';
import { AdminReasonDto } from '../../common/admin-route/admin-reason.dto.js';
import {
  AddedWebhookResponseDto,
  AddWebhookDto,
  DeadWebhookListResponseDto,
  ReplayWebhooksDto,
  ReplayWebhooksResponseDto,
  WebhookListResponseDto,
  WebhookSubscriptionParamsDto,
} from './dto/admin-webhook.dto.js';

/**
 * Webhook subscriptions and their dead letters (docs/operations/webhooks.md): the same
 * WebhooksService calls as the CLI's `webhooks:*` commands. A secret is shown once, when added.
 */
@ApiTags('admin')
@Controller('admin/webhooks')
export class AdminWebhooksController {
  constructor(private readonly adminApi: WebhooksAdminService) {}

  /** Every subscription, without its secret. */
  @Get()
  @AdminRoute('webhooks:read')
  listWebhooks(): Promise<WebhookListResponseDto> {
    return this.adminApi.webhooks();
  }

  /** Subscribes a URL to `all` events or to a list of them; answers its secret, this once. */
  @Post()
  @HttpCode(HttpStatus.CREATED)
  @AdminRoute(
    'webhooks:write',
    {
      status: HttpStatus.BAD_REQUEST,
      messages: {
        badUrl: WebhooksMessages.badUrl,
        privateDestination: WebhooksMessages.privateDestination,
      },
    },
    {
      status: HttpStatus.SERVICE_UNAVAILABLE,
      messages: { notConfigured: WebhooksMessages.notConfigured },
    },
  )
  @ApiCreatedResponse({ type: AddedWebhookResponseDto })
  addWebhook(
    @Body() body: AddWebhookDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<AddedWebhookResponseDto> {
    return this.adminApi.addWebhook(body, { key, origin });
  }

  /** The deliveries that used up their attempts, oldest event first. */
  @Get('dead')
  @AdminRoute('webhooks:read')
  listDeadWebhooks(): Promise<DeadWebhookListResponseDto> {
    return this.adminApi.deadWebhooks();
  }

  /** Makes one dead delivery (`id`) or every one (`all: true`) pending again, due now. */
  @Post('replay')
  @HttpCode(HttpStatus.OK)
  @AdminRoute('webhooks:write', HttpStatus.BAD_REQUEST, {
    status: HttpStatus.NOT_FOUND,
    messages: { unknownDeadDelivery: WebhooksMessages.unknownDeadDelivery },
  })
  @ApiOkResponse({ type: ReplayWebhooksResponseDto })
  replayWebhooks(
    @Body() body: ReplayWebhooksDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<ReplayWebhooksResponseDto> {
    return this.adminApi.replayWebhooks(body, { key, origin });
  }

  /** Removes a subscription and every delivery to it, pending or dead. */
  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @AdminRoute('webhooks:write', HttpStatus.BAD_REQUEST, {
    status: HttpStatus.NOT_FOUND,
    messages: { unknownSubscription: WebhooksMessages.unknownSubscription },
  })
  @ApiNoContentResponse()
  async removeWebhook(
    @Param() params: WebhookSubscriptionParamsDto,
    @Body() body: AdminReasonDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): Promise<void> {
    await this.adminApi.removeWebhook(params.id, body, { key, origin });
  }
}

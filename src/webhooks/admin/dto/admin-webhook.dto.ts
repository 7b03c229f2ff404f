import { ApiProperty } from '@nestjs/swagger';
import { IsString, IsUUID, Matches, MaxLength, ValidateBy, ValidateIf } from 'class-validator';
import { Trim } from '../../../common/validation/string-rules.js';
import type { AuthEventType } from '../../../events/auth-event.js';
import { WEBHOOK_EVENT_TYPES } from '../../webhook-events.js';
import { AdminReasonDto } from '../../../common/admin-route/admin-reason.dto.js';

/** `"all"`, or a non-empty list of catalogue types without repeats. */
function isEventSelection(value: unknown): boolean {
  if (value === 'all') {
    return true;
  }
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.length <= WEBHOOK_EVENT_TYPES.length &&
    new Set(value).size === value.length &&
    value.every(
      (type) =>
        typeof type === 'string' && (WEBHOOK_EVENT_TYPES as readonly string[]).includes(type),
    )
  );
}

/** The body of `POST /api/admin/webhooks`. */
export class AddWebhookDto extends AdminReasonDto {
  /**
   * Where deliveries go: an absolute http(s) URL without credentials or fragment, of at most
   * 2048 characters.
   */
  // Only its type is checked here. What the text of a URL may be (scheme, credentials,
  // fragment, length, control or invisible characters) is one rule, WebhooksService's, which the
  // CLI runs too: a URL it refuses gets the documented 400 `La URL debe ser http o https
  // absoluta…` on both, never problem details. The 64 KiB body limit bounds what reaches it.
  @Trim()
  @IsString()
  readonly url: string;

  /** `"all"`, or the event types to send (docs/webhooks.md), each once. */
  @ApiProperty({
    oneOf: [
      { type: 'string', enum: ['all'] },
      { type: 'array', items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] }, minItems: 1 },
    ],
  })
  @ValidateBy({
    name: 'isEventSelection',
    validator: {
      validate: isEventSelection,
      defaultMessage: () => 'events must be "all" or a list of known event types, each once',
    },
  })
  readonly events: 'all' | AuthEventType[];
}

/** `{id}` of a subscription route. */
export class WebhookSubscriptionParamsDto {
  /** The subscription's id (a UUID). */
  @IsUUID()
  readonly id: string;
}

/** A delivery's id, the `webhook-id` header: `msg_<event id>_<subscription id>`. */
const DELIVERY_ID = /^msg_[0-9a-f-]{36}_[0-9a-f-]{36}$/;

/** The body of `POST /api/admin/webhooks/replay`: one dead delivery by `id`, or `all: true`. */
export class ReplayWebhooksDto extends AdminReasonDto {
  /** The dead delivery to replay, as `GET /api/admin/webhooks/dead` lists it. */
  @ValidateIf((body: ReplayWebhooksDto) => body.all === undefined || body.id !== undefined)
  @IsString()
  @MaxLength(80)
  @Matches(DELIVERY_ID)
  readonly id?: string;

  /** Every dead delivery: `true`, instead of `id` (never both). */
  @ValidateBy({
    name: 'isAllInsteadOfId',
    validator: {
      validate: (value: unknown, args) =>
        (args?.object as ReplayWebhooksDto).id === undefined ? value === true : value === undefined,
      defaultMessage: () => 'give either id or all: true',
    },
  })
  readonly all?: true;
}

/** A subscription as it is shown: never its secret. */
export class WebhookSubscriptionResponseDto {
  @ApiProperty({ format: 'uuid' })
  readonly id: string;

  readonly url: string;

  /** `"all"`, or the types it receives. */
  @ApiProperty({
    oneOf: [
      { type: 'string', enum: ['all'] },
      { type: 'array', items: { type: 'string' } },
    ],
  })
  readonly events: 'all' | readonly AuthEventType[];

  readonly isEnabled: boolean;

  @ApiProperty({ format: 'date-time' })
  readonly createdAt: string;
}

/** A new subscription, with its signing secret: shown in this answer only, never again. */
export class AddedWebhookResponseDto extends WebhookSubscriptionResponseDto {
  /** `whsec_…`: the receiver verifies signatures with it. */
  readonly secret: string;
}

export class WebhookListResponseDto {
  @ApiProperty({ type: [WebhookSubscriptionResponseDto] })
  readonly webhooks: WebhookSubscriptionResponseDto[];
}

/** A delivery that used up its attempts. */
export class DeadWebhookResponseDto {
  /** The `webhook-id`; replay it by this id. */
  readonly id: string;

  @ApiProperty({ format: 'uuid' })
  readonly subscriptionId: string;

  /** The audit event it delivers. */
  readonly eventId: string;

  readonly type: string;

  @ApiProperty({ nullable: true, type: String })
  readonly accountId: string | null;

  readonly attempts: number;

  /** The last attempt's failure (a status or a network error; never a body). */
  @ApiProperty({ nullable: true, type: String })
  readonly lastError: string | null;

  @ApiProperty({ format: 'date-time', nullable: true, type: String })
  readonly finishedAt: string | null;
}

export class DeadWebhookListResponseDto {
  @ApiProperty({ type: [DeadWebhookResponseDto] })
  readonly deliveries: DeadWebhookResponseDto[];
}

export class ReplayWebhooksResponseDto {
  /** How many dead deliveries are pending again. */
  readonly replayedCount: number;
}

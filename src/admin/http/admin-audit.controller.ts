import { Controller, Get, Header, HttpStatus, Query, StreamableFile } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import { Readable } from 'node:stream';
import { Origin } from '../../common/decorators/origin.decorator.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import { ApiErrorResponses } from '../../common/swagger/api-error-responses.decorator.js';
import { AdminApiService } from './admin-api.service.js';
import type { AdminPrincipal } from '../../common/admin-route/current-admin.decorator.js';
import { AdminScope } from '../../common/admin-route/admin-scope.decorator.js';
import { ADMIN_FORBIDDEN } from '../../common/admin-route/admin-scope.js';
import { CurrentAdminKey } from '../../common/admin-route/current-admin.decorator.js';
import { AuditPageResponseDto } from './dto/audit-event-response.dto.js';
import { AuditFilterDto, AuditQueryDto } from './dto/audit-query.dto.js';

/** JSON Lines (one JSON object per line), as `application/x-ndjson` names it. */
export const JSON_LINES_CONTENT_TYPE = 'application/x-ndjson; charset=utf-8';

/** The audit trail, read and exported (docs/operations/admin-api.md). */
@ApiTags('admin')
@Controller('admin/audit')
export class AdminAuditController {
  constructor(private readonly adminApi: AdminApiService) {}

  /** Events by account, type and time range, newest first, a page at a time. */
  @Get()
  @AdminScope('audit:read')
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, ADMIN_FORBIDDEN)
  listAuditEvents(@Query() query: AuditQueryDto): Promise<AuditPageResponseDto> {
    return this.adminApi.audit(query);
  }

  /**
   * Every event the filters match, newest first, as JSON Lines: one event (as the listing shows
   * it) per line, streamed page by page. The export itself is recorded.
   */
  @Get('export')
  @AdminScope('audit:read')
  @Header('content-type', JSON_LINES_CONTENT_TYPE)
  @ApiProduces('application/x-ndjson')
  @ApiOkResponse({
    description: 'One AuditEventResponseDto as JSON per line.',
    schema: { type: 'string' },
  })
  @ApiErrorResponses(HttpStatus.BAD_REQUEST, ADMIN_FORBIDDEN)
  exportAuditEvents(
    @Query() query: AuditFilterDto,
    @CurrentAdminKey() key: AdminPrincipal,
    @Origin() origin: RequestOrigin,
  ): StreamableFile {
    return new StreamableFile(Readable.from(this.adminApi.auditLines(query, { key, origin })), {
      type: JSON_LINES_CONTENT_TYPE,
    });
  }
}

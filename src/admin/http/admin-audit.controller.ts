import { Controller, Get, Header, HttpStatus, Query, StreamableFile } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import { Readable } from 'node:stream';
import { Origin } from '../../common/decorators/origin.decorator.js';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import { AdminApiService } from './admin-api.service.js';
import type { AdminPrincipal } from '../../common/admin-route/current-admin.decorator.js';
import { AdminRoute } from '../../common/admin-route/admin-scope.decorator.js';
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
  @AdminRoute('audit:read', HttpStatus.BAD_REQUEST)
  listAuditEvents(@Query() query: AuditQueryDto): Promise<AuditPageResponseDto> {
    return this.adminApi.audit(query);
  }

  /**
   * Every event the filters match, newest first, as JSON Lines: one event (as the listing shows
   * it) per line, streamed page by page. The export itself is recorded.
   */
  @Get('export')
  @AdminRoute('audit:read', HttpStatus.BAD_REQUEST)
  @Header('content-type', JSON_LINES_CONTENT_TYPE)
  @ApiProduces('application/x-ndjson')
  @ApiOkResponse({
    description: 'One AuditEventResponseDto as JSON per line.',
    schema: { type: 'string' },
  })
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

import {
  Catch,
  HttpException,
  HttpStatus,
  Logger,
  ServiceUnavailableException,
  UnauthorizedException,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { HealthCheckResult } from '@nestjs/terminus';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES, type IncomingHttpHeaders } from 'node:http';
import { forRequest } from '../../logging/log-fields.js';
import {
  ConflictError,
  DomainError,
  ForbiddenError,
  InvalidArgumentError,
  NotFoundError,
  UnauthorizedError,
  UnavailableError,
} from '../errors/domain-errors.js';
import {
  errorBodyAt,
  INTERNAL_ERROR_MESSAGE,
  JSON_CONTENT_TYPE,
  UNAUTHORIZED_MESSAGE,
  VALIDATION_PROBLEM_TITLE,
  VALIDATION_PROBLEM_TYPE,
  type ErrorBody,
  type ProblemDetailsBody,
} from '../errors/error-bodies.js';
import { RequestValidationError } from '../errors/request-validation.error.js';
import { Clock } from '../time/clock.js';
import { bearerChallenge } from './bearer-challenge.js';

type DomainErrorClass = abstract new (message: string) => DomainError;

/** SPEC §7: failure kind to status. A domain error class without a row here is a 500. */
const DOMAIN_ERROR_STATUS: ReadonlyArray<readonly [DomainErrorClass, HttpStatus]> = [
  [UnauthorizedError, HttpStatus.UNAUTHORIZED],
  [ConflictError, HttpStatus.CONFLICT],
  [NotFoundError, HttpStatus.NOT_FOUND],
  [InvalidArgumentError, HttpStatus.BAD_REQUEST],
  [UnavailableError, HttpStatus.SERVICE_UNAVAILABLE],
  [ForbiddenError, HttpStatus.FORBIDDEN],
];

interface Reply {
  readonly status: number;
  readonly body: ErrorBody | ProblemDetailsBody | HealthCheckResult;
  readonly contentType: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** What the mapping needs to know of the request. */
interface FailedRequest {
  readonly id: string;
  readonly headers: IncomingHttpHeaders;
}

const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

/** The one place that turns a failure into an HTTP answer. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger(AllExceptionsFilter.name);

  constructor(private readonly clock: Clock) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    if (hungUpBeforeItsEnd(request)) {
      // No handler ran and no one is left to answer: not a failure of the service. The request
      // line says `request aborted`; an error line here would let anyone inflate error alerts.
      return;
    }
    const { status, body, contentType, headers } = this.toReply(exception, request);
    const reply = http.getResponse<FastifyReply>();
    void reply
      .status(status)
      .headers({ ...headers, 'content-type': contentType })
      .send(body);
  }

  /** `request` names the request on the error line of a 500, and answers the bearer challenge. */
  toReply(exception: unknown, request?: FailedRequest): Reply {
    if (exception instanceof RequestValidationError) {
      return problemDetails(exception.errors);
    }
    if (exception instanceof DomainError) {
      const row = DOMAIN_ERROR_STATUS.find(([kind]) => exception instanceof kind);
      if (row !== undefined) {
        return this.errorBody(row[1], exception.message);
      }
    }
    const health = failedHealthCheckOf(exception);
    if (health !== undefined) {
      return {
        status: HttpStatus.SERVICE_UNAVAILABLE,
        body: health,
        contentType: JSON_CONTENT_TYPE,
      };
    }
    if (exception instanceof UnauthorizedException) {
      // Only the bearer-token guard throws it; the body stays SPEC §7's, the header says why.
      return {
        status: HttpStatus.UNAUTHORIZED,
        body: { status: 401, message: UNAUTHORIZED_MESSAGE },
        contentType: JSON_CONTENT_TYPE,
        headers: { 'www-authenticate': bearerChallenge(request?.headers.authorization) },
      };
    }
    if (exception instanceof HttpException && exception.getStatus() < 500) {
      return this.frameworkError(exception.getStatus());
    }
    const detail = exception instanceof Error ? exception.stack : String(exception);
    if (request === undefined) {
      this.logger.error('Unhandled failure', detail);
    } else {
      this.logger.error('Unhandled failure', forRequest(request.id), detail);
    }
    return this.errorBody(HttpStatus.INTERNAL_SERVER_ERROR, INTERNAL_ERROR_MESSAGE);
  }

  /**
   * Failures raised by Fastify or Nest before a handler runs (a body that cannot be read as
   * JSON is not one: the body parser reports it as a RequestValidationError). Their own messages
   * can echo the request (a path, a header), so only the status phrase is returned.
   */
  private frameworkError(status: number): Reply {
    return this.errorBody(status, STATUS_CODES[status] ?? 'Error');
  }

  private errorBody(status: number, message: string): Reply {
    return {
      status,
      body: errorBodyAt(status, message, this.clock.now()),
      contentType: JSON_CONTENT_TYPE,
    };
  }
}

/**
 * A failed health check: terminus throws a 503 carrying its result, and the probe's caller reads
 * that result (which indicator is down), so it is the body. It holds only the indicators' fixed
 * texts and terminus's timeout text, never a driver message.
 */
function failedHealthCheckOf(exception: unknown): HealthCheckResult | undefined {
  if (!(exception instanceof ServiceUnavailableException)) {
    return undefined;
  }
  const response: unknown = exception.getResponse();
  if (typeof response !== 'object' || response === null) {
    return undefined;
  }
  const { status, details } = response as Partial<Record<keyof HealthCheckResult, unknown>>;
  const isFailure = status === 'error' || status === 'shutting_down';
  return isFailure && typeof details === 'object' && details !== null
    ? (response as HealthCheckResult)
    : undefined;
}

/** The connection closed before the whole request had arrived. */
function hungUpBeforeItsEnd(request: FastifyRequest): boolean {
  return request.raw.destroyed && !request.raw.complete;
}

function problemDetails(errors: Readonly<Record<string, readonly string[]>>): Reply {
  return {
    status: HttpStatus.BAD_REQUEST,
    body: { type: VALIDATION_PROBLEM_TYPE, title: VALIDATION_PROBLEM_TITLE, status: 400, errors },
    contentType: PROBLEM_CONTENT_TYPE,
  };
}

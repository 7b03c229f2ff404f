import { jest } from '@jest/globals';
import {
  BadRequestException,
  ForbiddenException,
  HttpException,
  HttpStatus,
  InternalServerErrorException,
  Logger,
  NotFoundException,
  PayloadTooLargeException,
  ServiceUnavailableException,
  UnauthorizedException,
  UnsupportedMediaTypeException,
  type ArgumentsHost,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { FakeClock } from '../../../test/utils/fake-clock.js';
import { Clock } from '../time/clock.js';
import {
  ConflictError,
  DomainError,
  InvalidArgumentError,
  NotFoundError,
  UnauthorizedError,
} from '../errors/domain-errors.js';
import { RequestValidationError } from '../errors/request-validation.error.js';
import { AllExceptionsFilter } from './all-exceptions.filter.js';

const NOW = new Date('2026-03-04T05:06:07.089Z');
const TIMESTAMP = '2026-03-04T05:06:07.089Z';
const JSON_TYPE = 'application/json; charset=utf-8';
const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';
const INTERNAL = 'Ocurrió un error interno.';

/** A domain error nobody mapped: it must not leak its message. */
class UnmappedDomainError extends DomainError {}

describe(AllExceptionsFilter.name, () => {
  let sut: AllExceptionsFilter;
  let loggedErrors: unknown[][];

  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({
      providers: [AllExceptionsFilter, { provide: Clock, useValue: new FakeClock(NOW) }],
    }).compile();
    sut = moduleRef.get(AllExceptionsFilter);
    loggedErrors = [];
    jest.spyOn(Logger.prototype, 'error').mockImplementation((...args: unknown[]) => {
      loggedErrors.push(args);
    });
  });

  afterEach(() => {
    jest.restoreAllMocks();
  });

  it.each([
    ['UnauthorizedError', new UnauthorizedError('Credenciales inválidas.'), 401],
    ['ConflictError', new ConflictError('Ya existe una cuenta con ese email.'), 409],
    ['NotFoundError', new NotFoundError('Usuario no encontrado.'), 404],
    ['InvalidArgumentError', new InvalidArgumentError('Argumento inválido.'), 400],
  ])('should map a %s to %i with the error body', (_name, error, status) => {
    expect(sut.toReply(error)).toEqual({
      status,
      body: { status, message: error.message, timestamp: TIMESTAMP },
      contentType: JSON_TYPE,
    });
    expect(loggedErrors).toEqual([]);
  });

  it('should take the timestamp from the Clock as ISO 8601 UTC', () => {
    const reply = sut.toReply(new UnauthorizedError('x'));

    expect(reply.body).toHaveProperty('timestamp', NOW.toISOString());
  });

  it('should map a RequestValidationError to problem details', () => {
    const errors = { email: ['email must be an email'], password: ['a', 'b'] };

    expect(sut.toReply(new RequestValidationError(errors))).toEqual({
      status: 400,
      body: {
        type: 'https://tools.ietf.org/html/rfc9110#section-15.5.1',
        title: 'One or more validation errors occurred.',
        status: 400,
        errors,
      },
      contentType: PROBLEM_TYPE,
    });
  });

  it.each([
    ['without a message', new UnauthorizedException()],
    ['with a message', new UnauthorizedException('jwt expired')],
  ])('should map an UnauthorizedException %s to a bare 401 without timestamp', (_label, error) => {
    const reply = sut.toReply(error);

    expect(reply).toEqual({
      status: 401,
      body: { status: 401, message: 'Unauthorized' },
      contentType: JSON_TYPE,
      headers: { 'www-authenticate': 'Bearer' },
    });
    expect(reply.body).not.toHaveProperty('timestamp');
  });

  it.each([
    ['no Authorization header', undefined, 'Bearer'],
    ['an empty Authorization header', '', 'Bearer'],
    ['another scheme', 'Basic YWxpY2U6cHc=', 'Bearer'],
    ['the scheme without a token', 'Bearer', 'Bearer'],
    ['the scheme and spaces only', 'Bearer   ', 'Bearer'],
    ['a bearer token', 'Bearer abc.def.ghi', 'Bearer error="invalid_token"'],
    ['a bearer token in lower case', 'bearer abc.def.ghi', 'Bearer error="invalid_token"'],
    ['a bearer token after two spaces', 'Bearer  abc.def.ghi', 'Bearer error="invalid_token"'],
    ['a bearer token that is not a JWT', 'Bearer opaque', 'Bearer error="invalid_token"'],
  ])(
    'should challenge a guard 401 for a request with %s (RFC 6750 §3)',
    (_label, authorization, challenge) => {
      const reply = sut.toReply(new UnauthorizedException(), {
        id: 'r-1',
        headers: { authorization },
      });

      expect(reply.headers).toEqual({ 'www-authenticate': challenge });
      expect(reply.body).toEqual({ status: 401, message: 'Unauthorized' });
    },
  );

  it('should not challenge a 401 of the domain, which is about other credentials', () => {
    const reply = sut.toReply(new UnauthorizedError('Refresh token inválido.'), {
      id: 'r-1',
      headers: { authorization: 'Bearer abc.def.ghi' },
    });

    expect(reply.headers).toBeUndefined();
  });

  it('should map a NotFoundException (unknown route) to a 404 error body without its own text', () => {
    const error = new NotFoundException('Cannot POST /api/auth/secret?token=abc');

    expect(sut.toReply(error)).toEqual({
      status: 404,
      body: { status: 404, message: 'Not Found', timestamp: TIMESTAMP },
      contentType: JSON_TYPE,
    });
  });

  it.each([
    [413, new PayloadTooLargeException('body of 2000000 bytes'), 'Payload Too Large'],
    [415, new UnsupportedMediaTypeException('text/plain'), 'Unsupported Media Type'],
    [403, new ForbiddenException(), 'Forbidden'],
    [405, new HttpException('anything', HttpStatus.METHOD_NOT_ALLOWED), 'Method Not Allowed'],
  ])('should keep the status %i of another HttpException', (status, error, message) => {
    expect(sut.toReply(error)).toEqual({
      status,
      body: { status, message, timestamp: TIMESTAMP },
      contentType: JSON_TYPE,
    });
  });

  it.each([
    ['a BadRequestException', new BadRequestException('Unexpected token } in JSON at position 9')],
    ['a 400 HttpException', new HttpException({ reason: "'/api/%zz' is not valid" }, 400)],
  ])(
    'should answer %s raised before a handler (the body parser reports its own) with the bare phrase',
    (_label, error) => {
      const reply = sut.toReply(error);

      expect(reply).toEqual({
        status: 400,
        body: { status: 400, message: 'Bad Request', timestamp: TIMESTAMP },
        contentType: JSON_TYPE,
      });
    },
  );

  it.each([
    [
      'error',
      {
        status: 'error',
        info: { migrations: { status: 'up' } },
        error: { database: { status: 'down', message: 'The database did not answer.' } },
        details: {
          migrations: { status: 'up' },
          database: { status: 'down', message: 'The database did not answer.' },
        },
      },
    ],
    ['shutting_down', { status: 'shutting_down', info: {}, error: {}, details: {} }],
  ])('should answer a failed health check (%s) with 503 and its own result', (_label, result) => {
    const reply = sut.toReply(new ServiceUnavailableException(result));

    expect(reply).toEqual({ status: 503, body: result, contentType: JSON_TYPE });
    expect(loggedErrors).toEqual([]);
  });

  it.each([
    ['without a body', new ServiceUnavailableException()],
    ['with a text', new ServiceUnavailableException('upstream pool exhausted')],
    [
      'with a result that is not a failure',
      new ServiceUnavailableException({ status: 'ok', details: {} }),
    ],
  ])('should treat any other 503 %s as an unhandled failure', (_label, error) => {
    expect(sut.toReply(error)).toEqual({
      status: 500,
      body: { status: 500, message: INTERNAL, timestamp: TIMESTAMP },
      contentType: JSON_TYPE,
    });
  });

  it.each([
    ['an Error', new Error('SQLITE_BUSY: database is locked at /srv/keygate.db')],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a domain error without a row', new UnmappedDomainError('secret detail')],
    ['a 5xx HttpException', new InternalServerErrorException('stack detail')],
    ['a string', 'thrown string detail'],
    ['undefined', undefined],
  ])('should map %s to a 500 that reveals nothing, and log it', (_label, error) => {
    const reply = sut.toReply(error);

    expect(reply).toEqual({
      status: 500,
      body: { status: 500, message: INTERNAL, timestamp: TIMESTAMP },
      contentType: JSON_TYPE,
    });
    expect(loggedErrors).toHaveLength(1);
  });

  it('should log the stack of an unhandled Error', () => {
    const error = new Error('database is locked');

    sut.toReply(error);

    expect(loggedErrors).toHaveLength(1);
    expect(JSON.stringify(loggedErrors[0])).toContain('database is locked');
    expect(loggedErrors[0]).toContain(error.stack);
  });

  it('should send the reply through Fastify with its status and content type', () => {
    const send = jest.fn();
    const headers = jest.fn(() => ({ send }));
    const status = jest.fn(() => ({ headers }));
    const host = {
      switchToHttp: () => ({
        getRequest: () => ({ id: 'r-1', headers: {}, raw: { destroyed: false, complete: true } }),
        getResponse: () => ({ status }),
      }),
    } as unknown as ArgumentsHost;

    sut.catch(new ConflictError('Ya existe una cuenta con ese email.'), host);

    expect(status).toHaveBeenCalledWith(409);
    expect(headers).toHaveBeenCalledWith({ 'content-type': JSON_TYPE });
    expect(send).toHaveBeenCalledWith({
      status: 409,
      message: 'Ya existe una cuenta con ese email.',
      timestamp: TIMESTAMP,
    });
  });

  it('should neither answer nor log when the client hung up before its request was read', () => {
    const status = jest.fn();
    const host = {
      switchToHttp: () => ({
        getRequest: () => ({ id: 'r-2', raw: { destroyed: true, complete: false } }),
        getResponse: () => ({ status }),
      }),
    } as unknown as ArgumentsHost;

    sut.catch(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }), host);

    expect(status).not.toHaveBeenCalled();
    expect(loggedErrors).toEqual([]);
  });
});

import { HttpAdapterHost } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { LoggerModule } from 'nestjs-pino';
import { RequestLogging } from './request-logging.js';

describe(RequestLogging.name, () => {
  it('should do nothing in an application context, which has no HTTP server', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [LoggerModule.forRoot({ pinoHttp: { level: 'silent' }, forRoutes: [] })],
      providers: [RequestLogging],
    }).compile();
    const sut = moduleRef.get(RequestLogging);

    expect(moduleRef.get(HttpAdapterHost).httpAdapter).toBeUndefined();
    expect(() => sut.onModuleInit()).not.toThrow();
    await moduleRef.close();
  });
});

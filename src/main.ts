import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { NativeLogger } from 'nestjs-pino';
import { AppModule } from './app.module.js';
import { configureApp, createHttpAdapter } from './app.setup.js';
import { AppConfig } from './config/app-config.js';
import { EXTENSIONS } from './extensions.js';
import { ManagementServer } from './metrics/management-server.js';
import { exitGracefullyOnSignals } from './shutdown.js';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create<NestFastifyApplication>(
    await AppModule.forRoot({ extensions: EXTENSIONS }),
    createHttpAdapter(),
    // Nest's start-up lines wait for pino. If start-up fails they are dropped, with their stack
    // traces: the one line below says why.
    { abortOnError: false, bodyParser: false, bufferLogs: true, autoFlushLogs: false },
  );
  // NativeLogger keeps Nest's error(message, stack, context) contract, so the filter's detail of
  // a failure reaches the line even when it is not a stack trace.
  app.useLogger(app.get(NativeLogger));
  app.flushLogs();
  configureApp(app);
  const { port, host } = app.get(AppConfig);
  exitGracefullyOnSignals(app);
  await app.listen(port, host);
  await app.get(ManagementServer).start();
}

bootstrap().catch((error: unknown) => {
  // One line, no stack: start-up failures are configuration problems an operator must read.
  const reason = error instanceof Error ? error.message : String(error);
  process.stderr.write(`Keygate failed to start: ${reason}\n`);
  process.exit(1);
});

import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module.js';
import { configureApp, createHttpAdapter } from './app.setup.js';
import { AppConfig } from './config/app-config.js';
import { ManagementServer } from './metrics/management-server.js';
import { exitGracefullyOnSignals } from './shutdown.js';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create<NestFastifyApplication>(
    await AppModule.forRoot(),
    createHttpAdapter(),
    { abortOnError: false, bodyParser: false },
  );
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

import { Logger, type INestApplication } from '@nestjs/common';

/** In-flight requests get this long to finish after SIGTERM before the process gives up. */
export const SHUTDOWN_GRACE_MS = 9_000;

/**
 * On SIGTERM or SIGINT: stop accepting connections, let in-flight requests finish, close the
 * database, and exit 0. Nest's own shutdown hooks would re-raise the signal, so the exit status
 * would read as a crash.
 */
export function exitGracefullyOnSignals(app: INestApplication): void {
  const logger = new Logger('Shutdown');
  const onSignal = (signal: NodeJS.Signals): void => {
    logger.log(`${signal} received: draining in-flight requests`);
    const deadline = setTimeout(() => {
      logger.error(`Requests still running after ${SHUTDOWN_GRACE_MS} ms: exiting anyway`);
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    deadline.unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error('Shutdown failed', error instanceof Error ? error.stack : String(error));
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}

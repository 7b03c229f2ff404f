import { ConsoleLogger, type LogLevel } from '@nestjs/common';

/**
 * Standard output carries only the command's answer, so scripts can read it: log lines (warnings
 * and errors only, without stack traces) go to standard error. The failure that ends a command
 * is reported once, by runCli, so Nest's own report of it is left out.
 */
export class CliLogger extends ConsoleLogger {
  constructor() {
    super({
      logLevels: ['error', 'warn'],
      prefix: 'keygate-cli',
      colors: process.stderr.isTTY === true,
    });
  }

  protected override printMessages(
    messages: unknown[],
    context?: string,
    logLevel?: LogLevel,
    _writeStreamType?: 'stdout' | 'stderr',
  ): void {
    if (context === 'ExceptionHandler') {
      return;
    }
    const texts = messages.map((message) => (message instanceof Error ? message.message : message));
    super.printMessages(texts, context, logLevel, 'stderr');
  }

  override printStackTrace(): void {
    // An operator needs the reason, which the message carries; not the call stack.
  }
}

import { ConsoleLogger, type LogLevel } from '@nestjs/common';

export interface LogEntry {
  readonly level: LogLevel;
  readonly context: string | undefined;
  readonly text: string;
}

/** Keeps every log line in memory (and prints none) so tests can assert levels and redaction. */
export class RecordingLogger extends ConsoleLogger {
  readonly entries: LogEntry[] = [];

  protected override printMessages(
    messages: unknown[],
    context?: string,
    logLevel: LogLevel = 'log',
    _stream?: 'stdout' | 'stderr',
    errorStack?: unknown,
  ): void {
    for (const message of messages) {
      const stack = typeof errorStack === 'string' ? `\n${errorStack}` : '';
      this.entries.push({ level: logLevel, context, text: `${this.stringify(message)}${stack}` });
    }
  }

  override printStackTrace(): void {
    // Already recorded with its message by printMessages.
  }

  /** Every recorded line as one string, for "this secret never appears" checks. */
  allText(): string {
    return this.entries
      .map((entry) => `${entry.level} ${entry.context ?? ''} ${entry.text}`)
      .join('\n');
  }

  at(level: LogLevel): LogEntry[] {
    return this.entries.filter((entry) => entry.level === level);
  }

  private stringify(message: unknown): string {
    if (typeof message === 'string') {
      return message;
    }
    if (message instanceof Error) {
      return `${message.message}\n${message.stack ?? ''}`;
    }
    return JSON.stringify(message);
  }
}

import { PinoLogger } from 'nestjs-pino';
import type { DestinationStream } from 'pino';

/** One line as pino wrote it, parsed. */
export interface LogLine {
  readonly level: string;
  readonly msg?: string;
  readonly requestId?: string;
  readonly context?: string;
  readonly [key: string]: unknown;
}

/** How long a test waits for a request line, which is written once the answer has gone out. */
const REQUEST_LINE_TIMEOUT_MS = 2_000;

/** The lines pino wrote while one test app was open, exactly as written. */
export class LogCapture {
  private readonly chunks: string[] = [];
  private readonly waiters = new Set<() => void>();

  write(chunk: string): void {
    this.chunks.push(chunk);
    for (const wake of this.waiters) {
      wake();
    }
  }

  /** Everything written, for "this secret appears nowhere" checks. */
  text(): string {
    return this.chunks.join('');
  }

  lines(): LogLine[] {
    return this.text()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as LogLine);
  }

  /** Every line logged while the request with this id ran, its request line included. */
  forRequest(requestId: string): LogLine[] {
    return this.lines().filter((line) => line.requestId === requestId);
  }

  /** The request line of a request, waiting for it if the answer has only just gone out. */
  async requestLine(requestId: string): Promise<LogLine> {
    const deadline = Date.now() + REQUEST_LINE_TIMEOUT_MS;
    for (;;) {
      const found = this.forRequest(requestId).filter(isRequestLine);
      if (found.length > 0) {
        return found[0];
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`no request line for ${requestId} in:\n${this.text()}`);
      }
      await this.nextWrite(left);
    }
  }

  private nextWrite(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, timeoutMs);
      this.waiters.add(wake);
    });
  }
}

export function isRequestLine(line: LogLine): boolean {
  return line.msg === 'request completed' || line.msg === 'request aborted';
}

/**
 * The one stream every test app of a test file logs to. nestjs-pino builds its root logger, and
 * with it the destination and the level, once per module registry (once per test file under
 * Jest), from the first app's options; so apps cannot each have a stream of their own. Each open
 * app's capture gets every line written while it is open.
 */
class LogSink implements DestinationStream {
  private readonly captures = new Set<LogCapture>();

  write(chunk: string): void {
    for (const capture of this.captures) {
      capture.write(chunk);
    }
  }

  /** A capture for an app configured with Logging__Level=`level`, whose logger exists. */
  open(level: string): LogCapture {
    if (PinoLogger.root.level !== level) {
      throw new Error(
        `Logging__Level=${level}, but this test file's pino logger was built with ` +
          `${PinoLogger.root.level} for an earlier app; nestjs-pino builds it only once.`,
      );
    }
    const capture = new LogCapture();
    this.captures.add(capture);
    return capture;
  }

  close(capture: LogCapture): void {
    this.captures.delete(capture);
  }
}

export const testLogSink = new LogSink();

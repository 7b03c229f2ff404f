import { open, rm } from 'node:fs/promises';

/** About this many characters are gathered before one write: few syscalls, bounded memory. */
const CHUNK_CHARS = 64 * 1024;

/** Where exported lines go: standard output or a new file. */
export interface LineSink {
  write(line: string): Promise<void>;
  /** Writes what is gathered; a file is synced to disk before this resolves. */
  finish(): Promise<void>;
  /** After a failure: a file is closed and removed, so no partial export looks whole. */
  abandon(): Promise<void>;
}

/** A stream that says when it wants no more for now, as process.stdout does. */
export interface DrainableStream {
  write(text: string): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

/** Lines gathered into chunks, each chunk handed to `flushChunk` and awaited. */
class ChunkedSink implements LineSink {
  private lines: string[] = [];
  private chars = 0;

  constructor(
    private readonly flushChunk: (chunk: string) => Promise<void>,
    private readonly onFinish: () => Promise<void> = () => Promise.resolve(),
    private readonly onAbandon: () => Promise<void> = () => Promise.resolve(),
  ) {}

  async write(line: string): Promise<void> {
    this.lines.push(line, '\n');
    this.chars += line.length + 1;
    if (this.chars >= CHUNK_CHARS) {
      await this.flush();
    }
  }

  async finish(): Promise<void> {
    await this.flush();
    await this.onFinish();
  }

  abandon(): Promise<void> {
    return this.onAbandon();
  }

  private async flush(): Promise<void> {
    if (this.lines.length === 0) {
      return;
    }
    const chunk = this.lines.join('');
    this.lines = [];
    this.chars = 0;
    await this.flushChunk(chunk);
  }
}

/** Writes to a stream, waiting whenever it asks to (a slow pipe never fills memory). */
export function streamSink(stream: DrainableStream): LineSink {
  return new ChunkedSink((chunk) =>
    stream.write(chunk)
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          stream.once('drain', resolve);
        }),
  );
}

/**
 * Creates `path`, refusing one that exists (an earlier export is never overwritten), and writes
 * to it. Finishing syncs the file to disk: an export is taken before a purge deletes the rows.
 */
export async function newFileSink(path: string): Promise<LineSink> {
  const handle = await open(path, 'wx', 0o600);
  let closed = false;
  const close = async (): Promise<void> => {
    if (!closed) {
      closed = true;
      await handle.close();
    }
  };
  return new ChunkedSink(
    (chunk) => handle.appendFile(chunk, 'utf8'),
    async () => {
      await handle.sync();
      await close();
    },
    async () => {
      await close();
      await rm(path, { force: true });
    },
  );
}

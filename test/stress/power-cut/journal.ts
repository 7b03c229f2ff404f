import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

/** Record types written by powercut.c. */
const RecordType = {
  Path: 1,
  Write: 2,
  Truncate: 3,
  Sync: 4,
  Create: 5,
  Unlink: 6,
} as const;
type RecordType = (typeof RecordType)[keyof typeof RecordType];

const HEADER_BYTES = 24;
/** The unit a disk writes whole, or not at all; a write that spans several may land in part. */
const SECTOR_BYTES = 512;

export interface JournalRecord {
  readonly type: RecordType;
  /** Absolute path of the file (or of the watched directory itself). */
  readonly path: string;
  readonly offset: number;
  readonly data: Buffer;
  /** CLOCK_MONOTONIC once the call had returned; comparable with process.hrtime.bigint(). */
  readonly timeNs: bigint;
}

/** The records of a journal written by powercut.c, in order. */
export function readJournal(file: string): JournalRecord[] {
  const bytes = readFileSync(file);
  const paths = new Map<number, string>();
  const records: JournalRecord[] = [];
  let at = 0;
  while (at + HEADER_BYTES <= bytes.length) {
    const type = bytes.readUInt8(at) as RecordType;
    const pathId = bytes.readUInt8(at + 1);
    const length = bytes.readUInt32LE(at + 4);
    const offset = Number(bytes.readBigInt64LE(at + 8));
    const timeNs = bytes.readBigUInt64LE(at + 16);
    const data = bytes.subarray(at + HEADER_BYTES, at + HEADER_BYTES + length);
    at += HEADER_BYTES + length;
    if (data.length < length) {
      break; // The process died while appending this record: the call it describes never returned.
    }
    if (type === RecordType.Path) {
      paths.set(pathId, data.toString('utf8'));
      continue;
    }
    const path = paths.get(pathId);
    if (path === undefined) {
      throw new Error(`journal: record for undeclared path ${pathId}`);
    }
    records.push({ type, path, offset, data, timeNs });
  }
  return records;
}

/** What the disk holds after the power went: only what was fsynced, or that plus some of the rest. */
export type CutVariant =
  | { readonly kind: 'durable' }
  /** Each unsynced sector (and truncation, and new directory entry) reached the disk with probability `keep`. */
  | { readonly kind: 'subset'; readonly keep: number; readonly random: () => number };

/**
 * The files of `directory` (by base name) as a disk could hold them if the power had gone at
 * `cutNs`: `baseline` (durable when the run started) plus the journal up to that instant, where a
 * file's writes count as durable only up to its last completed fsync, and a file created during the
 * run exists only once its directory was fsynced after the creation. The -shm file is never
 * returned: it is shared memory, not durable state, and SQLite rebuilds it from the WAL.
 */
export function filesAt(
  records: readonly JournalRecord[],
  directory: string,
  baseline: ReadonlyMap<string, Buffer>,
  cutNs: bigint,
  variant: CutVariant,
): Map<string, Buffer> {
  const prefix = records.filter((record) => record.timeNs <= cutNs);
  const lastSync = new Map<string, number>();
  prefix.forEach((record, index) => {
    if (record.type === RecordType.Sync) {
      lastSync.set(record.path, index);
    }
  });
  const directorySyncs = prefix
    .map((record, index) =>
      record.type === RecordType.Sync && record.path === directory ? index : -1,
    )
    .filter((index) => index >= 0);

  const names = new Set<string>([...baseline.keys()]);
  for (const record of prefix) {
    if (record.path !== directory) {
      names.add(basename(record.path));
    }
  }

  const files = new Map<string, Buffer>();
  for (const name of names) {
    if (name.endsWith('-shm')) {
      continue;
    }
    const path = `${directory}/${name}`;
    const durableUpTo = lastSync.get(path) ?? -1;
    const content = new FileImage(baseline.get(name) ?? Buffer.alloc(0));
    let createdAt = -1;
    prefix.forEach((record, index) => {
      if (record.path !== path) {
        return;
      }
      if (record.type === RecordType.Unlink) {
        // SQLite removes the WAL only when the last connection closes cleanly; a run that does it
        // is outside what this model covers, so it fails loudly instead of guessing.
        throw new Error(`journal: ${name} was unlinked during the run`);
      }
      if (record.type === RecordType.Create) {
        createdAt = index;
        return;
      }
      if (index < durableUpTo) {
        content.apply(record, () => true);
      } else if (variant.kind === 'subset') {
        content.apply(record, () => variant.random() < variant.keep);
      }
    });
    const existedBefore = baseline.has(name);
    const entryIsDurable = existedBefore || directorySyncs.some((index) => index > createdAt);
    const exists =
      entryIsDurable ||
      (createdAt >= 0 && variant.kind === 'subset' && variant.random() < variant.keep);
    if (exists) {
      files.set(name, content.bytes());
    }
  }
  return files;
}

/** A file's bytes as writes and truncations land on it; grows by doubling, so appends stay cheap. */
class FileImage {
  private buffer: Buffer;
  private length: number;

  constructor(initial: Buffer) {
    this.buffer = Buffer.alloc(Math.max(initial.length * 2, 1 << 20));
    initial.copy(this.buffer);
    this.length = initial.length;
  }

  bytes(): Buffer {
    return Buffer.from(this.buffer.subarray(0, this.length));
  }

  /** Applies `record`, each sector of a write (or the truncation) only if `lands()`. */
  apply(record: JournalRecord, lands: () => boolean): void {
    if (record.type === RecordType.Truncate) {
      if (lands()) {
        this.resize(record.offset);
      }
      return;
    }
    if (record.type !== RecordType.Write) {
      return;
    }
    const end = record.offset + record.data.length;
    let from = record.offset;
    while (from < end) {
      const to = Math.min(end, (Math.floor(from / SECTOR_BYTES) + 1) * SECTOR_BYTES);
      if (lands()) {
        if (this.length < to) {
          this.resize(to);
        }
        record.data.copy(this.buffer, from, from - record.offset, to - record.offset);
      }
      from = to;
    }
  }

  /** Shrinks, or grows with zeros (a hole reads as zeros). */
  private resize(size: number): void {
    if (size > this.buffer.length) {
      const larger = Buffer.alloc(Math.max(size, this.buffer.length * 2));
      this.buffer.copy(larger, 0, 0, this.length);
      this.buffer = larger;
    }
    if (size > this.length) {
      this.buffer.fill(0, this.length, size);
    }
    this.length = size;
  }
}

import { open } from 'node:fs/promises';
import type { RequestOrigin } from '../../common/request-origin/request-origin.js';
import type { SigningKeyResponseDto } from '../dto/signing-key-response.dto.js';
import type { KeysService } from '../keys.service.js';

/** The commands of the key set (src/keys): none takes an e-mail. */
export type KeysInvocation =
  | { readonly kind: 'run'; readonly command: 'keys:list' | 'keys:rotate' }
  | { readonly kind: 'run'; readonly command: 'keys:retire'; readonly kid: string }
  | { readonly kind: 'run'; readonly command: 'keys:import'; readonly file: string };

/** A PEM private key is a few kilobytes at most (RSA 4096: about 3.3 KB). */
const MAX_PEM_BYTES = 64 * 1024;

/** The `keys:*` commands: each one KeysService call, its answer as plain text. */
export async function runKeysCommand(
  keys: KeysService,
  invocation: KeysInvocation,
  origin: RequestOrigin,
): Promise<string> {
  switch (invocation.command) {
    case 'keys:list':
      return keyTable(await keys.list());
    case 'keys:rotate': {
      const key = await keys.rotate(origin);
      return `Published ${describe(key)} as next; it signs from ${key.activatesAt}.`;
    }
    case 'keys:retire': {
      const key = await keys.retire(invocation.kid, origin);
      return `Retired ${describe(key)}: tokens it signed are refused by each instance within Keys__RefreshIntervalSeconds.`;
    }
    case 'keys:import': {
      const key = await keys.import(await readPem(invocation.file), origin);
      return `Imported ${describe(key)} as next; it signs from ${key.activatesAt}.`;
    }
  }
}

function describe(key: SigningKeyResponseDto): string {
  return `${key.algorithm} key ${key.kid}`;
}

/** Reads at most MAX_PEM_BYTES: the file is an operator's, but a wrong path may name anything. */
async function readPem(file: string): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(MAX_PEM_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > MAX_PEM_BYTES) {
      throw new Error(`${file} is larger than a PEM private key can be`);
    }
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

function keyTable(keys: readonly SigningKeyResponseDto[]): string {
  const header = ['KID', 'ALG', 'SOURCE', 'STATE', 'CREATED', 'SIGNS FROM', 'RETIRED'];
  const rows = keys.map((key) => [
    key.kid,
    key.algorithm,
    key.source,
    key.state,
    key.createdAt ?? '-',
    key.activatesAt ?? '-',
    key.retiredAt ?? '-',
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column].length)),
  );
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

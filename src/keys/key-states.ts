/** The states of docs/operations/signing-keys.md. */
export const KEY_STATES = ['next', 'current', 'previous', 'retired'] as const;
export type KeyState = (typeof KEY_STATES)[number];

/** What a key's state follows from (columns of `signing_keys`). */
export interface KeyTimes {
  readonly kid: string;
  /** Null for the row of a retired HS256 secret, which is no key of the set. */
  readonly activatesAt: Date | null;
  readonly createdAt: Date;
  readonly retiredAt: Date | null;
}

export interface KeyStatus {
  readonly state: KeyState;
  /**
   * Until when (ms since the epoch, exclusive) tokens of the key verify: the activation of the key
   * after it plus a token's lifetime; Infinity while none follows; -Infinity once retired.
   */
  readonly verifiesUntil: number;
}

/**
 * The state of every key at `nowMs`, from the instants alone, so every instance that read the same
 * rows agrees. Keys are ordered by activation (then retired before unretired, creation and kid,
 * so ties cannot make two keys current): the newest activated key is current unless an operator retired it, in which
 * case none is; an older one is previous until `tokenLifetimeMs` after the key that followed it
 * activated (the last token it signed has expired by then), then retired; a key whose activation
 * is still ahead is next.
 */
export function keyStates(
  rows: readonly KeyTimes[],
  nowMs: number,
  tokenLifetimeMs: number,
): Map<string, KeyStatus> {
  const statuses = new Map<string, KeyStatus>();
  const ordered = rows
    .filter((row): row is KeyTimes & { activatesAt: Date } => row.activatesAt !== null)
    .sort(
      (a, b) =>
        a.activatesAt.getTime() - b.activatesAt.getTime() ||
        // A key made current at once replaces one retired at the same instant: it comes after.
        Number(a.retiredAt === null) - Number(b.retiredAt === null) ||
        a.createdAt.getTime() - b.createdAt.getTime() ||
        (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0),
    );
  let newestActivated = -1;
  ordered.forEach((row, index) => {
    if (row.activatesAt.getTime() <= nowMs) {
      newestActivated = index;
    }
  });
  ordered.forEach((row, index) => {
    const successor = ordered[index + 1];
    const verifiesUntil =
      row.retiredAt !== null
        ? -Infinity
        : successor === undefined
          ? Infinity
          : successor.activatesAt.getTime() + tokenLifetimeMs;
    let state: KeyState;
    if (row.retiredAt !== null) {
      state = 'retired';
    } else if (row.activatesAt.getTime() > nowMs) {
      state = 'next';
    } else if (index === newestActivated) {
      state = 'current';
    } else {
      state = nowMs < verifiesUntil ? 'previous' : 'retired';
    }
    statuses.set(row.kid, {
      state,
      verifiesUntil: state === 'retired' ? -Infinity : verifiesUntil,
    });
  });
  for (const row of rows) {
    if (row.activatesAt === null) {
      statuses.set(row.kid, { state: 'retired', verifiesUntil: -Infinity });
    }
  }
  return statuses;
}

/** The first instant after `nowMs` at which some key changes state; Infinity if none will. */
export function nextChangeAfter(
  rows: readonly KeyTimes[],
  statuses: ReadonlyMap<string, KeyStatus>,
  nowMs: number,
): number {
  let next = Infinity;
  for (const row of rows) {
    const candidates = [
      row.activatesAt?.getTime() ?? -Infinity,
      statuses.get(row.kid)?.verifiesUntil ?? -Infinity,
    ];
    for (const at of candidates) {
      if (at > nowMs && at < next) {
        next = at;
      }
    }
  }
  return next;
}

/** TypeORM stores datetimes in SQLite as `YYYY-MM-DD HH:MM:SS.SSS`, in UTC. */
export function toSqliteDatetime(date: Date): string {
  return date.toISOString().replace('T', ' ').slice(0, 23);
}

export function fromSqliteDatetime(value: string): Date;
export function fromSqliteDatetime(value: string | null): Date | null;
export function fromSqliteDatetime(value: string | null): Date | null {
  return value === null ? null : new Date(`${value.replace(' ', 'T')}Z`);
}

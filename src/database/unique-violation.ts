import { QueryFailedError } from 'typeorm';

const SQLITE_UNIQUE = 'SQLITE_CONSTRAINT_UNIQUE';
const SQLITE_PRIMARY_KEY = 'SQLITE_CONSTRAINT_PRIMARYKEY';
const POSTGRES_UNIQUE = '23505';

/** True when a write failed because it would duplicate a unique key, on either engine. */
export function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) {
    return false;
  }
  const driverError: unknown = error.driverError;
  if (typeof driverError !== 'object' || driverError === null || !('code' in driverError)) {
    return false;
  }
  const { code } = driverError;
  return code === SQLITE_UNIQUE || code === SQLITE_PRIMARY_KEY || code === POSTGRES_UNIQUE;
}

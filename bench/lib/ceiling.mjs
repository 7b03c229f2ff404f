// The raw PBKDF2 ceiling of the machine: the most password hashes per second it can do, and so
// the most logins or registrations per second any server could answer.
import { pbkdf2, randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { promisify } from 'node:util';
import { machineBusySeconds } from './proc.mjs';

const pbkdf2Async = promisify(pbkdf2);
export const PBKDF2_ITERATIONS = 600_000;

/**
 * One async PBKDF2-SHA256 call per core, each started again as soon as it ends, for `ms`.
 * Counted until the last hash finishes, so the hashes started just before the deadline count
 * whole. Also reports how much CPU other processes took meanwhile.
 */
export async function measurePbkdf2Ceiling(ms) {
  const parallelism = availableParallelism();
  const busyBefore = machineBusySeconds();
  const ownBefore = process.cpuUsage();
  const started = performance.now();
  let hashes = 0;
  const worker = async () => {
    while (performance.now() - started < ms) {
      await pbkdf2Async('Bench!password1', randomBytes(16), PBKDF2_ITERATIONS, 32, 'sha256');
      hashes++;
    }
  };
  await Promise.all(Array.from({ length: parallelism }, worker));
  const seconds = (performance.now() - started) / 1000;
  const own = process.cpuUsage(ownBefore);
  const ownCpuSeconds = (own.user + own.system) / 1e6;
  const otherCpuSeconds = machineBusySeconds() - busyBefore - ownCpuSeconds;
  return {
    parallelism,
    hashes,
    seconds,
    hashesPerSecond: hashes / seconds,
    // CPU time one hash costs: unlike hashes/s, barely moved by other processes on the machine.
    cpuMsPerHash: (ownCpuSeconds * 1000) / hashes,
    otherCores: Math.max(0, otherCpuSeconds) / seconds,
  };
}

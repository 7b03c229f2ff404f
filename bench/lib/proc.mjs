// Readers for /proc: the figures the harness takes from the processes under test, from outside,
// so that neither the service nor the baseline has to cooperate.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';

/** Kernel clock ticks per second, the unit of utime/stime in /proc/<pid>/stat. */
const CLOCK_TICKS = readClockTicks();

function readClockTicks() {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** User + system CPU seconds a process has used so far. */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces; fields after its closing parenthesis are
  // fixed: state is field 3, so utime (14) and stime (15) are at offsets 11 and 12.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Resident set size now and its peak (VmHWM), in MiB. */
export function memoryMiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  // RssAnon: the heap, SQLite's page cache, buffers; RssFile: mapped files (code, and the
  // database pages read through SQLite's memory mapping), which the kernel can take back.
  return {
    rss: kib('VmRSS') / 1024,
    peak: kib('VmHWM') / 1024,
    anon: kib('RssAnon') / 1024,
    file: kib('RssFile') / 1024,
  };
}

/**
 * Resets VmHWM to the current RSS (writing 5 to clear_refs, Linux 4.0+), so that the peak of
 * each scenario can be read on its own. Returns false where the kernel refuses; the peak is then
 * the peak since start, which the report says.
 */
export function resetPeakRss(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Number of open file descriptors (sockets, database files, pipes). */
export function openFds(pid) {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** Pids of every PostgreSQL server process on the machine (postmaster, backends, workers). */
export function postgresPids() {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') {
        pids.push(Number(entry));
      }
    } catch {
      // The process ended between readdir and read.
    }
  }
  return pids;
}

/** CPU seconds of each pid; pids that have gone are left out. */
export function cpuByPid(pids) {
  const byPid = new Map();
  for (const pid of pids) {
    try {
      byPid.set(pid, cpuSeconds(pid));
    } catch {
      // Gone: a backend that closed. Its last seconds are lost, which is rare and small.
    }
  }
  return byPid;
}

/** CPU seconds used between two cpuByPid snapshots; a pid new in `after` counts from zero. */
export function cpuDelta(before, after) {
  let total = 0;
  for (const [pid, seconds] of after) {
    total += seconds - (before.get(pid) ?? 0);
  }
  return total;
}

/**
 * CPU seconds the whole machine has been busy (all cores, all processes), from /proc/stat.
 * Compared with what the harness and the servers used, it shows how much other processes
 * (a shared machine) took during a measurement.
 */
export function machineBusySeconds() {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .map(Number);
  return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS;
}

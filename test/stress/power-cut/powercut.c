/*
 * Power-cut journal: an LD_PRELOAD library for the service process under test.
 *
 * For every file under POWERCUT_DIR (the database, its WAL, the directory itself; the -shm file is
 * recorded too but never restored), it appends to POWERCUT_JOURNAL what reached the kernel, in
 * order: each write with its offset and bytes, each truncation, each creation and unlink, and each
 * completed fsync/fdatasync. Data is in the page cache once write() returns, but it is durable only
 * once an fsync of that file has returned; the test rebuilds the files as a disk could hold them at
 * any instant (test/stress/power-cut/journal.ts).
 *
 * Every record is stamped with CLOCK_MONOTONIC after the call returned, the clock Node's
 * process.hrtime uses, so the test can compare it with the instant it received an answer.
 * A record is appended only after its call succeeded: a sync is recorded once it is complete.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum { REC_PATH = 1, REC_WRITE = 2, REC_TRUNCATE = 3, REC_SYNC = 4, REC_CREATE = 5, REC_UNLINK = 6 };

#define MAX_FDS 65536
#define MAX_PATHS 250
#define MAX_PATH_LEN 1024

struct record {
  uint8_t type;
  uint8_t path_id;
  uint16_t reserved;
  uint32_t length;
  int64_t offset;
  uint64_t time_ns;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int journal_fd = -1;
static char watched[MAX_PATH_LEN];
static size_t watched_len;
static char paths[MAX_PATHS + 1][MAX_PATH_LEN];
static int path_count;
/* fd -> path id + 1; 0 when the fd is not watched. */
static uint8_t fd_path[MAX_FDS];

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real_close)(int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);
static ssize_t (*real_pwritev64)(int, const struct iovec *, int, off64_t);
static int (*real_ftruncate)(int, off_t);
static int (*real_ftruncate64)(int, off64_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_unlink)(const char *);
static int (*real_unlinkat)(int, const char *, int);

static void *next(const char *name) {
  void *symbol = dlsym(RTLD_NEXT, name);
  if (symbol == NULL) {
    fprintf(stderr, "powercut: no symbol %s\n", name);
    abort();
  }
  return symbol;
}

__attribute__((constructor)) static void init(void) {
  real_open = next("open");
  real_open64 = next("open64");
  real_openat = next("openat");
  real_openat64 = next("openat64");
  real_close = next("close");
  real_write = next("write");
  real_writev = next("writev");
  real_pwrite = next("pwrite");
  real_pwrite64 = next("pwrite64");
  real_pwritev = next("pwritev");
  real_pwritev64 = next("pwritev64");
  real_ftruncate = next("ftruncate");
  real_ftruncate64 = next("ftruncate64");
  real_fsync = next("fsync");
  real_fdatasync = next("fdatasync");
  real_unlink = next("unlink");
  real_unlinkat = next("unlinkat");

  const char *dir = getenv("POWERCUT_DIR");
  const char *journal = getenv("POWERCUT_JOURNAL");
  if (dir == NULL || journal == NULL || strlen(dir) >= MAX_PATH_LEN) {
    fprintf(stderr, "powercut: POWERCUT_DIR and POWERCUT_JOURNAL are required\n");
    abort();
  }
  strcpy(watched, dir);
  watched_len = strlen(watched);
  while (watched_len > 1 && watched[watched_len - 1] == '/') {
    watched[--watched_len] = '\0';
  }
  journal_fd = real_open(journal, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (journal_fd < 0) {
    perror("powercut: journal");
    abort();
  }
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Appends one record; the caller holds the lock. A journal that cannot be written ends the run. */
static void append(uint8_t type, int path_id, int64_t offset, const void *data, uint32_t length) {
  struct record header = {type, (uint8_t)path_id, 0, length, offset, now_ns()};
  struct iovec parts[2] = {{&header, sizeof header}, {(void *)data, length}};
  size_t expected = sizeof header + length;
  ssize_t written = real_writev(journal_fd, parts, data == NULL ? 1 : 2);
  if (written != (ssize_t)expected) {
    fprintf(stderr, "powercut: journal write failed\n");
    abort();
  }
}

/* The watched absolute path a name refers to, or NULL. Relative names are taken from the cwd. */
static int watched_name(int dirfd, const char *name, char *out) {
  if (name == NULL) {
    return 0;
  }
  if (name[0] == '/') {
    if (strlen(name) >= MAX_PATH_LEN) {
      return 0;
    }
    strcpy(out, name);
  } else {
    char base[MAX_PATH_LEN];
    if (dirfd == AT_FDCWD) {
      if (getcwd(base, sizeof base) == NULL) {
        return 0;
      }
    } else {
      char link[64];
      snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
      ssize_t n = readlink(link, base, sizeof base - 1);
      if (n < 0) {
        return 0;
      }
      base[n] = '\0';
    }
    if (snprintf(out, MAX_PATH_LEN, "%s/%s", base, name) >= MAX_PATH_LEN) {
      return 0;
    }
  }
  return strncmp(out, watched, watched_len) == 0 &&
         (out[watched_len] == '\0' || out[watched_len] == '/');
}

/* The id of a watched path, declaring it in the journal the first time; the caller holds the lock. */
static int path_id(const char *path) {
  for (int i = 0; i < path_count; i++) {
    if (strcmp(paths[i], path) == 0) {
      return i;
    }
  }
  if (path_count == MAX_PATHS) {
    fprintf(stderr, "powercut: too many paths\n");
    abort();
  }
  strcpy(paths[path_count], path);
  append(REC_PATH, path_count, 0, path, (uint32_t)strlen(path));
  return path_count++;
}

static int opened(int dirfd, const char *name, int flags, int fd, int existed) {
  char path[MAX_PATH_LEN];
  if (fd < 0 || fd >= MAX_FDS || !watched_name(dirfd, name, path)) {
    return fd;
  }
  pthread_mutex_lock(&lock);
  int id = path_id(path);
  fd_path[fd] = (uint8_t)(id + 1);
  if ((flags & O_CREAT) && !existed) {
    append(REC_CREATE, id, 0, NULL, 0);
  }
  if ((flags & O_TRUNC) && existed) {
    append(REC_TRUNCATE, id, 0, NULL, 0);
  }
  pthread_mutex_unlock(&lock);
  return fd;
}

static int exists_at(int dirfd, const char *name) {
  struct stat st;
  return fstatat(dirfd, name, &st, 0) == 0;
}

static mode_t mode_of(int flags, va_list args) {
  return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(args, int) : 0;
}

int open(const char *name, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_of(flags, args);
  va_end(args);
  int existed = (flags & (O_CREAT | O_TRUNC)) ? exists_at(AT_FDCWD, name) : 1;
  return opened(AT_FDCWD, name, flags, real_open(name, flags, mode), existed);
}

int open64(const char *name, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_of(flags, args);
  va_end(args);
  int existed = (flags & (O_CREAT | O_TRUNC)) ? exists_at(AT_FDCWD, name) : 1;
  return opened(AT_FDCWD, name, flags, real_open64(name, flags, mode), existed);
}

int openat(int dirfd, const char *name, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_of(flags, args);
  va_end(args);
  int existed = (flags & (O_CREAT | O_TRUNC)) ? exists_at(dirfd, name) : 1;
  return opened(dirfd, name, flags, real_openat(dirfd, name, flags, mode), existed);
}

int openat64(int dirfd, const char *name, int flags, ...) {
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_of(flags, args);
  va_end(args);
  int existed = (flags & (O_CREAT | O_TRUNC)) ? exists_at(dirfd, name) : 1;
  return opened(dirfd, name, flags, real_openat64(dirfd, name, flags, mode), existed);
}

int close(int fd) {
  if (fd >= 0 && fd < MAX_FDS && fd_path[fd] != 0) {
    pthread_mutex_lock(&lock);
    fd_path[fd] = 0;
    pthread_mutex_unlock(&lock);
  }
  return real_close(fd);
}

static int watched_fd(int fd) { return fd >= 0 && fd < MAX_FDS && fd_path[fd] != 0; }

static void record_writes(int fd, int64_t offset, const struct iovec *parts, int count,
                          ssize_t written) {
  pthread_mutex_lock(&lock);
  int id = fd_path[fd] - 1;
  for (int i = 0; i < count && written > 0; i++) {
    size_t length = parts[i].iov_len < (size_t)written ? parts[i].iov_len : (size_t)written;
    append(REC_WRITE, id, offset, parts[i].iov_base, (uint32_t)length);
    offset += (int64_t)length;
    written -= (ssize_t)length;
  }
  pthread_mutex_unlock(&lock);
}

ssize_t pwrite(int fd, const void *data, size_t length, off_t offset) {
  ssize_t written = real_pwrite(fd, data, length, offset);
  if (written > 0 && watched_fd(fd)) {
    struct iovec part = {(void *)data, length};
    record_writes(fd, offset, &part, 1, written);
  }
  return written;
}

ssize_t pwrite64(int fd, const void *data, size_t length, off64_t offset) {
  ssize_t written = real_pwrite64(fd, data, length, offset);
  if (written > 0 && watched_fd(fd)) {
    struct iovec part = {(void *)data, length};
    record_writes(fd, offset, &part, 1, written);
  }
  return written;
}

ssize_t pwritev(int fd, const struct iovec *parts, int count, off_t offset) {
  ssize_t written = real_pwritev(fd, parts, count, offset);
  if (written > 0 && watched_fd(fd)) {
    record_writes(fd, offset, parts, count, written);
  }
  return written;
}

ssize_t pwritev64(int fd, const struct iovec *parts, int count, off64_t offset) {
  ssize_t written = real_pwritev64(fd, parts, count, offset);
  if (written > 0 && watched_fd(fd)) {
    record_writes(fd, offset, parts, count, written);
  }
  return written;
}

ssize_t write(int fd, const void *data, size_t length) {
  if (!watched_fd(fd)) {
    return real_write(fd, data, length);
  }
  off_t offset = lseek(fd, 0, SEEK_CUR);
  ssize_t written = real_write(fd, data, length);
  if (written > 0) {
    struct iovec part = {(void *)data, length};
    record_writes(fd, offset, &part, 1, written);
  }
  return written;
}

ssize_t writev(int fd, const struct iovec *parts, int count) {
  if (!watched_fd(fd)) {
    return real_writev(fd, parts, count);
  }
  off_t offset = lseek(fd, 0, SEEK_CUR);
  ssize_t written = real_writev(fd, parts, count);
  if (written > 0) {
    record_writes(fd, offset, parts, count, written);
  }
  return written;
}

static int truncated(int fd, int64_t size, int result) {
  if (result == 0 && watched_fd(fd)) {
    pthread_mutex_lock(&lock);
    append(REC_TRUNCATE, fd_path[fd] - 1, size, NULL, 0);
    pthread_mutex_unlock(&lock);
  }
  return result;
}

int ftruncate(int fd, off_t size) { return truncated(fd, size, real_ftruncate(fd, size)); }

int ftruncate64(int fd, off64_t size) { return truncated(fd, size, real_ftruncate64(fd, size)); }

static int synced(int fd, int result) {
  if (result == 0 && watched_fd(fd)) {
    pthread_mutex_lock(&lock);
    append(REC_SYNC, fd_path[fd] - 1, 0, NULL, 0);
    pthread_mutex_unlock(&lock);
  }
  return result;
}

int fsync(int fd) { return synced(fd, real_fsync(fd)); }

int fdatasync(int fd) { return synced(fd, real_fdatasync(fd)); }

static int unlinked(int dirfd, const char *name, int result) {
  char path[MAX_PATH_LEN];
  if (result == 0 && watched_name(dirfd, name, path)) {
    pthread_mutex_lock(&lock);
    append(REC_UNLINK, path_id(path), 0, NULL, 0);
    pthread_mutex_unlock(&lock);
  }
  return result;
}

int unlink(const char *name) {
  char path[MAX_PATH_LEN];
  /* Resolve before the call: a relative name cannot be resolved against a removed file later. */
  int watched_now = watched_name(AT_FDCWD, name, path);
  int result = real_unlink(name);
  return watched_now ? unlinked(AT_FDCWD, path, result) : result;
}

int unlinkat(int dirfd, const char *name, int flags) {
  return unlinked(dirfd, name, real_unlinkat(dirfd, name, flags));
}

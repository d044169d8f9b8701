// files: owns opening files to read (regular files only, never blocking), remembering which
// were read, and writing files whole through a new file renamed over the target.
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

// ---------------------------------------------------------------- the files read

// Every file read, by device and inode, in a hash set (open addressing): a lesson may read
// thousands of files, and each write asks whether its target is one of them.
typedef struct FileId {
    dev_t dev;
    ino_t ino;
    bool used;
} FileId;

static struct {
    FileId *slots;
    size_t n, cap;  // cap is 0 or a power of two
} read_set;

static size_t slot_of(const FileId *slots, size_t cap, dev_t dev, ino_t ino) {
    uint64_t h = ((uint64_t)dev * 0x9E3779B97F4A7C15u) ^ (uint64_t)ino;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9u;
    h ^= h >> 32;
    size_t i = (size_t)h & (cap - 1);
    while (slots[i].used && !(slots[i].dev == dev && slots[i].ino == ino))
        i = (i + 1) & (cap - 1);
    return i;
}

static bool was_read(const struct stat *st) {
    return read_set.cap && read_set.slots[slot_of(read_set.slots, read_set.cap, st->st_dev, st->st_ino)].used;
}

// Remember a file read; false when memory ran out.
static bool remember(const struct stat *st) {
    if (was_read(st))
        return true;
    if (2 * (read_set.n + 1) > read_set.cap) {  // at most half full
        size_t cap = read_set.cap ? 2 * read_set.cap : 64;
        FileId *slots = util_calloc(cap, sizeof(FileId));
        if (!slots)
            return false;
        for (size_t i = 0; i < read_set.cap; i++)
            if (read_set.slots[i].used)
                slots[slot_of(slots, cap, read_set.slots[i].dev, read_set.slots[i].ino)] = read_set.slots[i];
        util_free(read_set.slots);
        read_set.slots = slots;
        read_set.cap = cap;
    }
    read_set.slots[slot_of(read_set.slots, read_set.cap, st->st_dev, st->st_ino)] =
        (FileId){.dev = st->st_dev, .ino = st->st_ino, .used = true};
    read_set.n++;
    return true;
}

// ---------------------------------------------------------------- reading

// 0 when a file of this kind may be read; else why not.
static int kind_refused(const struct stat *st, unsigned flags) {
    if (S_ISREG(st->st_mode))
        return 0;
    if (S_ISDIR(st->st_mode))
        return EISDIR;
    if (S_ISFIFO(st->st_mode)) {
        struct stat in;
        bool is_stdin = (flags & FILES_STDIN_PIPE) && fstat(STDIN_FILENO, &in) == 0 && in.st_dev == st->st_dev &&
                        in.st_ino == st->st_ino;
        return is_stdin ? 0 : FILES_IS_FIFO;
    }
    if (S_ISSOCK(st->st_mode))
        return FILES_IS_SOCKET;
    return FILES_IS_DEVICE;
}

int files_open_read(const char *path, unsigned flags, int *err) {
    // Its kind is asked before it is opened, so that a device is never even opened, and again
    // of what was opened, which may have changed in between: opened without blocking, a named
    // pipe without a writer cannot stop the tracer either way.
    struct stat st;
    if (stat(path, &st) != 0) {
        *err = errno;
        return -1;
    }
    if ((*err = kind_refused(&st, flags)) != 0)
        return -1;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        *err = errno;
        return -1;
    }
    int fl;
    if (fstat(fd, &st) != 0 || (fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
        *err = errno;
    else if ((*err = kind_refused(&st, flags)) == 0 && !remember(&st))
        *err = ENOMEM;
    if (*err) {
        close(fd);
        return -1;
    }
    return fd;
}

int files_read(const char *path, unsigned flags, size_t max, char **bytes, size_t *len) {
    *bytes = NULL;
    *len = 0;
    int err;
    int fd = files_open_read(path, flags, &err);
    if (fd < 0)
        return err;
    // One byte past max at most, so that the caller can tell a file that is too large; a pipe
    // or a file that grows while it is read is read to its end like any other.
    struct stat st;
    size_t cap = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uintmax_t)st.st_size < max ? (size_t)st.st_size + 1
                 : max < ((size_t)1 << 16)                                                ? max + 1
                                                                                          : (size_t)1 << 16;
    char *buf = util_malloc(cap + 1);
    size_t n = 0;
    err = buf ? 0 : ENOMEM;
    while (!err) {
        if (n == cap) {
            if (cap > max)
                break;
            size_t grown = cap <= max / 2 ? 2 * cap : max + 1;
            char *more = util_realloc(buf, grown + 1);
            if (!more) {
                err = ENOMEM;
                break;
            }
            buf = more;
            cap = grown;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno != EINTR)
            err = errno;
        else if (got == 0)
            break;
        else if (got > 0)
            n += (size_t)got;
    }
    close(fd);
    if (err) {
        util_free(buf);
        return err;
    }
    buf[n] = '\0';
    *bytes = buf;
    *len = n;
    return 0;
}

const char *files_error_text(int err) {
    switch (err) {
    case FILES_IS_FIFO:
        return "it is a named pipe (FIFO), not a file";
    case FILES_IS_DEVICE:
        return "it is a device, not a file";
    case FILES_IS_SOCKET:
        return "it is a socket, not a file";
    case FILES_IS_LINK:
        return "it is a symbolic link, which the tracer neither writes through nor replaces";
    case FILES_IS_INPUT:
        return "it is a file this lesson reads, and writing it would lose it";
    case FILES_CUT_SHORT:
        return "it is now shorter than when it was opened: it changed while it was read";
    default:
        return strerror(err);
    }
}

bool files_not_regular(int err) {
    return err == FILES_IS_FIFO || err == FILES_IS_DEVICE || err == FILES_IS_SOCKET;
}

// ---------------------------------------------------------------- writing

int files_may_replace(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : errno;
    if (S_ISLNK(st.st_mode))
        return FILES_IS_LINK;
    int err = kind_refused(&st, 0);
    if (err)
        return err;
    if (was_read(&st))
        return FILES_IS_INPUT;
    // A file the user may not write (made read-only to keep it) is not replaced either.
    return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0 ? 0 : errno;
}

// PATH.XXXXXX, six letters or digits that differ from one call to the next.
static void temporary_name(char *buf, size_t len, const char *path, unsigned attempt) {
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t x = (uint64_t)now.tv_nsec ^ (uint64_t)now.tv_sec << 30 ^ (uint64_t)getpid() << 20 ^ attempt;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;  // splitmix64's finish
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
    x ^= x >> 31;
    memcpy(buf, path, len);
    buf[len] = '.';
    for (size_t i = 0; i < 6; i++, x /= 62)
        buf[len + 1 + i] = digits[x % 62];
    buf[len + 7] = '\0';
}

enum { FILES_TEMPORARY_TRIES = 100 };

int files_write(const char *path, FilesFill *fill, const void *what) {
    int err = files_may_replace(path);
    if (err)
        return err;
    // PATH.XXXXXX, within the longest path the system takes (PATH_MAX, 4096 with its NUL).
    char temp[4096];
    size_t len = strlen(path);
    if (len + 8 > sizeof(temp))
        return ENAMETOOLONG;
    // Created exclusively and never through a link: whatever another user planted beside the
    // target is neither written nor removed; another name is tried instead.
    int fd = -1;
    for (unsigned attempt = 0; fd < 0 && attempt < FILES_TEMPORARY_TRIES; attempt++) {
        temporary_name(temp, len, path, attempt);
        fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0)
        return errno;
    FILE *f = fdopen(fd, "wb");
    bool ok = f != NULL;
    errno = 0;
    if (!ok)
        close(fd);
    else
        ok = fill(f, what);
    err = errno ? errno : EIO;
    if (f && fclose(f) != 0 && ok) {
        ok = false;
        err = errno ? errno : EIO;
    }
    // Asked again, just before the rename: the target may have changed while it was written.
    if (ok && (err = files_may_replace(path)) != 0)
        ok = false;
    if (ok && rename(temp, path) != 0) {
        ok = false;
        err = errno;
    }
    if (!ok)
        unlink(temp);
    return ok ? 0 : err;
}

// watch: inotify on the lesson's folder (for its name) and on the file (for its inode).
#define _GNU_SOURCE  // ppoll: wait with a signal mask set atomically
#include "watch.h"

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

// A save is a burst of events (write, close, rename); trace once it has been quiet this long,
// or at the latest after WATCH_SETTLE_MAX_MS of a file that keeps changing.
#define WATCH_QUIET_MS 100
#define WATCH_SETTLE_MAX_MS 1000

#define FOLDER_EVENTS \
    (IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | \
     IN_ONLYDIR)
#define FILE_EVENTS (IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)

struct Watch {
    int fd;
    int folder_wd;
    int file_wd;  // -1 while the file is not there
    char *path;
    char *folder;
    const char *name;  // the file's name inside folder (in path)
};

static const char *kind_of(mode_t mode) {
    return S_ISFIFO(mode)  ? "a pipe, which can be read only once"
           : S_ISCHR(mode) ? "a device, not a file"
           : S_ISDIR(mode) ? "a folder"
           : S_ISSOCK(mode) ? "a socket, not a file"
                            : "not a regular file";
}

static long elapsed_ms(const struct timespec *since) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)(now.tv_sec - since->tv_sec) * 1000 + (now.tv_nsec - since->tv_nsec) / 1000000;
}

Watch *watch_create(const char *path, Diag *diag) {
    struct stat st;
    if (stat(path, &st) != 0) {
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "cannot watch '%s': %s", path, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0,
                   "--watch needs a lesson file to read again after each save, but '%s' is %s", path,
                   kind_of(st.st_mode));
        diag_hint(diag, "save the lesson in a file and watch that: tracer --watch mine.yaml");
        return NULL;
    }
    Watch *w = util_calloc(1, sizeof(Watch));
    if (!w) {
        diag_out_of_memory(diag);
        return NULL;
    }
    w->fd = -1;
    w->path = util_strdup(path);
    // "lessons/mine.yaml" -> "lessons", "mine.yaml" -> ".", "/mine.yaml" -> "/".
    const char *slash = strrchr(path, '/');
    size_t folder_len = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
    w->folder = util_malloc(folder_len + 1);
    if (w->folder) {
        memcpy(w->folder, slash ? path : ".", folder_len);
        w->folder[folder_len] = '\0';
    }
    if (!w->path || !w->folder) {
        diag_out_of_memory(diag);
        watch_destroy(w);
        return NULL;
    }
    w->name = w->path + (slash ? (size_t)(slash - path) + 1 : 0);
    w->fd = inotify_init1(IN_CLOEXEC);
    w->folder_wd = w->fd < 0 ? -1 : inotify_add_watch(w->fd, w->folder, FOLDER_EVENTS);
    if (w->folder_wd < 0) {
        int err = errno;  // before diag_error, which may change errno
        diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "cannot watch '%s': %s", path, strerror(err));
        if (err == EMFILE || err == ENOSPC)
            diag_hint(diag, "the limit of open files or of inotify watches is reached; close other programs that watch files");
        watch_destroy(w);
        return NULL;
    }
    w->file_wd = inotify_add_watch(w->fd, w->path, FILE_EVENTS);
    return w;
}

// Read the events waiting; *changed when one concerns the file. 0, or ENOENT when the folder
// is gone, or the errno of a failed read.
static int read_events(Watch *w, bool *changed) {
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n = read(w->fd, buf, sizeof(buf));
    if (n < 0)
        return errno == EINTR || errno == EAGAIN ? 0 : errno;
    for (char *p = buf; p < buf + n;) {
        const struct inotify_event *e = (const struct inotify_event *)p;
        if (e->wd == w->folder_wd) {
            if (e->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT))
                return ENOENT;
            if (e->len && strcmp(e->name, w->name) == 0)
                *changed = true;
        } else if (e->wd == w->file_wd) {
            *changed = true;
            if (e->mask & IN_IGNORED)
                w->file_wd = -1;
        }
        p += sizeof(struct inotify_event) + e->len;
    }
    return 0;
}

int watch_wait(Watch *w, const sigset_t *wait_mask, WatchEvent *event, Diag *diag) {
    bool changed = false;
    struct timespec first = {0};
    const struct timespec quiet = {.tv_sec = WATCH_QUIET_MS / 1000, .tv_nsec = WATCH_QUIET_MS % 1000 * 1000000L};
    for (;;) {
        // Block with no timeout until the first change: no processor time while waiting.
        if (changed && elapsed_ms(&first) >= WATCH_SETTLE_MAX_MS)
            break;
        struct pollfd pfd = {.fd = w->fd, .events = POLLIN};
        int ready = ppoll(&pfd, 1, changed ? &quiet : NULL, wait_mask);
        if (ready < 0 && errno == EINTR && !changed) {
            *event = WATCH_SIGNAL;
            return STATUS_OK;
        }
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready < 0)
            return diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "cannot watch '%s': %s", w->path,
                              strerror(errno));
        if (ready == 0)
            break;  // quiet: the save is complete
        bool was_changed = changed;
        int err = read_events(w, &changed);
        if (err == ENOENT)
            return diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0,
                              "stopped watching '%s': its folder '%s' was deleted or moved", w->path, w->folder);
        if (err)
            return diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "cannot watch '%s': %s", w->path,
                              strerror(err));
        if (changed && !was_changed)
            clock_gettime(CLOCK_MONOTONIC, &first);
    }
    // A rename gave the name a new inode: watch that one, and let the old one go.
    int wd = inotify_add_watch(w->fd, w->path, FILE_EVENTS);
    if (w->file_wd >= 0 && w->file_wd != wd)
        inotify_rm_watch(w->fd, w->file_wd);
    w->file_wd = wd;
    struct stat st;
    *event = stat(w->path, &st) != 0 && errno == ENOENT ? WATCH_GONE : WATCH_SAVED;
    return STATUS_OK;
}

void watch_destroy(Watch *w) {
    if (!w)
        return;
    if (w->fd >= 0)
        close(w->fd);
    util_free(w->path);
    util_free(w->folder);
    util_free(w);
}

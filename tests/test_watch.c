// Unit tests of --watch's waiting (watch.h) in a folder of its own: saves in place and by
// rename, a file that keeps changing, other files of the folder, the lesson deleted and back,
// the folder deleted, and the files that cannot be watched. A child process makes the changes
// that must come while the wait is already blocked.
#define _DEFAULT_SOURCE  // mkdtemp
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "watch.h"

static char folder[64];

static int make_folder(void **state) {
    (void)state;
    snprintf(folder, sizeof(folder), "/tmp/tracer-watch-XXXXXX");
    return mkdtemp(folder) && chdir(folder) == 0 ? 0 : -1;
}

static int remove_folder(void **state) {
    (void)state;
    char command[128];
    snprintf(command, sizeof(command), "rm -rf '%s'", folder);
    return chdir("/") == 0 && system(command) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void pause_ms(long ms) {
    struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000};
    nanosleep(&t, NULL);
}

static long since_ms(const struct timespec *start) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)(now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

// In a child, after delay_ms: write `times` times, every_ms apart, to path.
static pid_t later(long delay_ms, const char *path, int times, long every_ms) {
    pid_t pid = fork();
    if (pid == 0) {
        pause_ms(delay_ms);
        for (int i = 0; i < times; i++) {
            FILE *f = fopen(path, "w");
            if (f) {
                fprintf(f, "title: save %d\n", i);
                fclose(f);
            }
            pause_ms(every_ms);
        }
        _exit(0);
    }
    return pid;
}

static void reap(pid_t pid) {
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
}

static WatchEvent wait_event(Watch *w) {
    Diag diag;
    diag_init(&diag);
    WatchEvent event = WATCH_SIGNAL;
    assert_int_equal(watch_wait(w, NULL, &event, &diag), STATUS_OK);
    return event;
}

// A lesson named without a folder is watched in the current one; a save in place, the
// folder's own attributes changing, and another file of the folder.
static void test_saves_in_the_current_folder(void **state) {
    (void)state;
    write_file("mine.yaml", "title: one\n");
    Diag diag;
    diag_init(&diag);
    Watch *w = watch_create("mine.yaml", &diag);
    assert_non_null(w);
    write_file("mine.yaml", "title: two\n");
    assert_int_equal(wait_event(w), WATCH_SAVED);
    // The folder's mode (an event without a name) and another file, then the lesson itself,
    // written while the wait is blocked: only the lesson ends the wait.
    assert_int_equal(chmod(".", 0700), 0);
    write_file("other.yaml", "title: not watched\n");
    pid_t child = later(200, "mine.yaml", 1, 0);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    assert_int_equal(wait_event(w), WATCH_SAVED);
    assert_true(since_ms(&start) >= 200);
    reap(child);
    watch_destroy(w);
}

// Deleted: the wait says so; written again (a new file): saved, and watched from then on.
// Renamed over, as most editors save: the new file is watched, the old one let go.
static void test_deleted_and_renamed(void **state) {
    (void)state;
    char path[128];
    snprintf(path, sizeof(path), "%s/lesson.yaml", folder);
    write_file(path, "title: one\n");
    Diag diag;
    diag_init(&diag);
    Watch *w = watch_create(path, &diag);
    assert_non_null(w);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(wait_event(w), WATCH_GONE);
    write_file(path, "title: back\n");
    assert_int_equal(wait_event(w), WATCH_SAVED);
    char part[160];
    snprintf(part, sizeof(part), "%s.new", path);
    write_file(part, "title: renamed over\n");
    assert_int_equal(rename(part, path), 0);
    assert_int_equal(wait_event(w), WATCH_SAVED);
    // The old file's watch ends with an event of its own, which must not count as a save.
    write_file(path, "title: in place\n");
    assert_int_equal(wait_event(w), WATCH_SAVED);
    // Renamed away (a backup, still there) and written anew: the backup's watch is let go,
    // and what it says as it goes is no save either.
    char backup[160];
    snprintf(backup, sizeof(backup), "%s.bak", path);
    assert_int_equal(rename(path, backup), 0);
    write_file(path, "title: a new file\n");
    assert_int_equal(wait_event(w), WATCH_SAVED);
    write_file(backup, "title: the backup changes\n");
    write_file(path, "title: saved again\n");
    assert_int_equal(wait_event(w), WATCH_SAVED);
    watch_destroy(w);
}

// A file written every 30 ms never goes quiet for 100 ms: the wait ends anyway, after a
// second (WATCH_SETTLE_MAX_MS), while the writes go on (for 10 s, unless stopped). (On a
// loaded machine the writer may pause longer than 100 ms, and the wait ends sooner.)
static void test_keeps_changing(void **state) {
    (void)state;
    write_file("busy.yaml", "title: busy\n");
    Diag diag;
    diag_init(&diag);
    Watch *w = watch_create("busy.yaml", &diag);
    assert_non_null(w);
    pid_t child = later(0, "busy.yaml", 333, 30);
    WatchEvent event = WATCH_SIGNAL;
    int status = watch_wait(w, NULL, &event, &diag);
    int child_status;
    bool still_writing = waitpid(child, &child_status, WNOHANG) == 0;
    kill(child, SIGKILL);
    reap(child);
    watch_destroy(w);
    assert_int_equal(status, STATUS_OK);
    assert_int_equal(event, WATCH_SAVED);
    assert_true(still_writing);
}

// The folder deleted: nothing can come back there, and the wait says why.
static void test_folder_deleted(void **state) {
    (void)state;
    assert_int_equal(mkdir("gone", 0700), 0);
    write_file("gone/lesson.yaml", "title: soon gone\n");
    Diag diag;
    diag_init(&diag);
    Watch *w = watch_create("gone/lesson.yaml", &diag);
    assert_non_null(w);
    assert_int_equal(system("rm -r gone"), 0);
    WatchEvent event;
    assert_int_equal(watch_wait(w, NULL, &event, &diag), STATUS_USAGE_ERROR);
    assert_string_equal(diag.message, "stopped watching 'gone/lesson.yaml': its folder 'gone' was deleted or moved");
    watch_destroy(w);
    watch_destroy(NULL);
}

// The lesson replaced by a link to a pipe: reading it would block until something writes to
// the pipe, so the wait stops and says why.
static void test_replaced_by_a_pipe(void **state) {
    (void)state;
    write_file("piped.yaml", "title: soon a pipe\n");
    assert_int_equal(mkfifo("fifo", 0600), 0);
    Diag diag;
    diag_init(&diag);
    Watch *w = watch_create("piped.yaml", &diag);
    assert_non_null(w);
    assert_int_equal(symlink("fifo", "piped.yaml.new"), 0);
    assert_int_equal(rename("piped.yaml.new", "piped.yaml"), 0);
    WatchEvent event;
    assert_int_equal(watch_wait(w, NULL, &event, &diag), STATUS_USAGE_ERROR);
    assert_string_equal(diag.message, "stopped watching 'piped.yaml': it is now a pipe, which can be read only once");
    watch_destroy(w);
}

// A socket is no lesson file; and with every file descriptor in use, inotify cannot start.
static void test_cannot_watch(void **state) {
    (void)state;
    int sock = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(sock >= 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/lesson.sock", folder);
    assert_int_equal(bind(sock, (struct sockaddr *)&addr, sizeof(addr)), 0);
    Diag diag;
    diag_init(&diag);
    assert_null(watch_create("lesson.sock", &diag));
    assert_string_equal(diag.message,
                        "--watch needs a lesson file to read again after each save, but 'lesson.sock' is a socket, "
                        "not a file");
    close(sock);

    write_file("crowded.yaml", "title: crowded\n");
    struct rlimit was;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
    struct rlimit low = {.rlim_cur = 32, .rlim_max = was.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    int fds[32], n = 0;
    while (n < 32 && (fds[n] = open("/dev/null", O_RDONLY)) >= 0)
        n++;
    diag_init(&diag);
    Watch *w = watch_create("crowded.yaml", &diag);
    while (n > 0)
        close(fds[--n]);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
    assert_null(w);
    assert_string_equal(diag.message, "cannot watch 'crowded.yaml': Too many open files");
    assert_string_equal(diag.hint,
                        "the limit of open files or of inotify watches is reached; close other programs that "
                        "watch files");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_saves_in_the_current_folder),
        cmocka_unit_test(test_deleted_and_renamed),
        cmocka_unit_test(test_replaced_by_a_pipe),
        cmocka_unit_test(test_keeps_changing),
        cmocka_unit_test(test_folder_deleted),
        cmocka_unit_test(test_cannot_watch),
    };
    return cmocka_run_group_tests(tests, make_folder, remove_folder);
}

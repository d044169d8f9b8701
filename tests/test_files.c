// Unit tests of reading and writing files safely (files.h): only regular files are read, never
// waited on (a named pipe, a device, a socket, a folder are refused at once); a file written is
// written whole through a new file, never through a link, never over a file read or one that
// may not be written, and a fill that fails leaves the target as it was.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "files.h"
#include "util.h"

static char dir[64];

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/test_files.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *in_dir(const char *name) {
    static char path[4][128];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
    return path[k];
}

static void put(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static bool fill_text(FILE *f, const void *what) {
    return fputs(what, f) >= 0;
}

static bool fill_fails(FILE *f, const void *what) {
    (void)what;
    fputs("half", f);
    errno = ENOSPC;  // as a full disk says
    return false;
}

static void expect_file(const char *path, const char *text) {
    char *bytes = NULL;
    size_t len = 0;
    assert_int_equal(files_read(path, 0, 1024, &bytes, &len), 0);
    assert_int_equal(len, strlen(text));
    assert_string_equal(bytes, text);
    util_free(bytes);
}

static void test_read_a_file_and_its_size(void **state) {
    (void)state;
    put(in_dir("a.txt"), "hello");
    expect_file(in_dir("a.txt"), "hello");
    // Larger than max: max + 1 bytes are read, and the length says so.
    char *bytes = NULL;
    size_t len = 0;
    assert_int_equal(files_read(in_dir("a.txt"), 0, 3, &bytes, &len), 0);
    assert_true(len > 3);
    util_free(bytes);
    assert_int_equal(files_read(in_dir("missing.txt"), 0, 3, &bytes, &len), ENOENT);
}

static void test_what_is_not_a_file_is_refused_at_once(void **state) {
    (void)state;
    int err = 0;
    assert_int_equal(mkfifo(in_dir("pipe"), 0600), 0);
    assert_int_equal(files_open_read(in_dir("pipe"), 0, &err), -1);  // would block without O_NONBLOCK
    assert_int_equal(err, FILES_IS_FIFO);
    assert_true(files_not_regular(err));
    assert_string_equal(files_error_text(err), "it is a named pipe (FIFO), not a file");
    assert_int_equal(files_open_read("/dev/null", 0, &err), -1);
    assert_int_equal(err, FILES_IS_DEVICE);
    assert_string_equal(files_error_text(err), "it is a device, not a file");
    assert_int_equal(files_open_read(dir, 0, &err), -1);
    assert_int_equal(err, EISDIR);
    assert_false(files_not_regular(err));
    // A socket bound in the folder.
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(s >= 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", in_dir("sock"));
    assert_int_equal(bind(s, (struct sockaddr *)&addr, sizeof(addr)), 0);
    assert_int_equal(files_open_read(in_dir("sock"), 0, &err), -1);
    assert_int_equal(err, FILES_IS_SOCKET);
    assert_string_equal(files_error_text(err), "it is a socket, not a file");
    close(s);
    assert_string_equal(files_error_text(ENOENT), strerror(ENOENT));
}

// The contents of a file read with stdio, not through files_read (which remembers the file as
// one read, that no write may then replace).
static void expect_written(const char *path, const char *text) {
    char buf[64] = "";
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    assert_string_equal(buf, text);
}

static void test_written_whole_and_renamed(void **state) {
    (void)state;
    const char *path = in_dir("out.txt");
    assert_int_equal(files_write(path, fill_text, "first"), 0);
    expect_written(path, "first");
    assert_int_equal(files_write(path, fill_text, "second"), 0);  // over a file not read: replaced
    expect_written(path, "second");
    // A fill that fails: its error, the target as it was, no temporary file left beside it.
    assert_int_equal(files_write(path, fill_fails, NULL), ENOSPC);
    expect_written(path, "second");
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "test -z \"$(ls '%s' | grep '^out.txt.')\"", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_never_through_a_link_nor_over_what_was_read(void **state) {
    (void)state;
    put(in_dir("target.txt"), "keep");
    assert_int_equal(symlink(in_dir("target.txt"), in_dir("link.txt")), 0);
    assert_int_equal(files_write(in_dir("link.txt"), fill_text, "lost"), FILES_IS_LINK);
    expect_file(in_dir("target.txt"), "keep");
    assert_int_equal(files_may_replace(in_dir("link.txt")), FILES_IS_LINK);
    // A pipe in the target's place.
    assert_int_equal(mkfifo(in_dir("fifo.txt"), 0600), 0);
    assert_int_equal(files_write(in_dir("fifo.txt"), fill_text, "x"), FILES_IS_FIFO);
    // A file read (expect_file read target.txt) is never written over.
    assert_int_equal(files_write(in_dir("target.txt"), fill_text, "lost"), FILES_IS_INPUT);
    assert_string_equal(files_error_text(FILES_IS_INPUT), "it is a file this lesson reads, and writing it would lose it");
    expect_file(in_dir("target.txt"), "keep");
    // Nor one that may not be written (unless the tests run as root, who may write anything).
    put(in_dir("locked.txt"), "mine");
    assert_int_equal(chmod(in_dir("locked.txt"), 0444), 0);
    if (geteuid() != 0)
        assert_int_equal(files_write(in_dir("locked.txt"), fill_text, "lost"), EACCES);
    assert_int_equal(files_may_replace(in_dir("nothing-here.txt")), 0);
    assert_string_equal(files_error_text(FILES_IS_LINK),
                        "it is a symbolic link, which the tracer neither writes through nor replaces");
    assert_string_equal(files_error_text(FILES_CUT_SHORT),
                        "it is now shorter than when it was opened: it changed while it was read");
}

// One folder for all the tests: the files read are remembered by device and inode for the
// whole process, and a file removed between tests could give its inode to a new one.
int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_a_file_and_its_size),
        cmocka_unit_test(test_what_is_not_a_file_is_refused_at_once),
        cmocka_unit_test(test_written_whole_and_renamed),
        cmocka_unit_test(test_never_through_a_link_nor_over_what_was_read),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

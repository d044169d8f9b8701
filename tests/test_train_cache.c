// Tests of train_cache's files: a training stored is read back bit for bit, and a file that is
// cut short, changed, of another key or of other sizes is passed over with nothing changed.
// The key itself (the same for a narration edit, another for a number) is tested on whole
// lessons by tests/train_cache.sh. A second tracer waits for the first's lock.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "train_cache.h"

typedef struct Fixture {
    char dir[64];
    uint8_t key[SHA256_BYTES];
    Arena *arena;
    TraceTraining record;
    Tensor *w[2];
} Fixture;

static int setup(void **state) {
    Fixture *f = calloc(1, sizeof(Fixture));
    assert_non_null(f);
    snprintf(f->dir, sizeof(f->dir), "/tmp/test_train_cache.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    for (int i = 0; i < SHA256_BYTES; i++)
        f->key[i] = (uint8_t)(7 * i + 1);
    f->arena = arena_create();
    assert_non_null(f->arena);
    f->record = (TraceTraining){.arena = f->arena, .steps = 5};
    f->record.losses = arena_array(f->arena, 5, sizeof(double));
    Shape a = {.rank = 2, .dim = {2, 3}}, b = {.rank = 1, .dim = {4}};
    f->w[0] = tensor_create(&a);
    f->w[1] = tensor_create(&b);
    assert_non_null(f->w[0]);
    assert_non_null(f->w[1]);
    *state = f;
    return 0;
}

static void remove_folder(const char *dir) {
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            struct stat st;
            if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
                remove_folder(path);
            else
                unlink(path);
        }
    closedir(d);
    rmdir(dir);
}

static int teardown(void **state) {
    Fixture *f = *state;
    remove_folder(f->dir);
    tensor_destroy(f->w[0]);
    tensor_destroy(f->w[1]);
    arena_destroy(f->arena);
    free(f);
    return 0;
}

// A record of 3 steps of 5, stopped, and two trained tensors with values no arithmetic makes
// by chance: -0.0, a subnormal, the largest double, nan with a payload.
static void fill(Fixture *f) {
    const double losses[] = {2.5, 1.25, 0x1.fffffffffffffp-1};
    memcpy(f->record.losses, losses, sizeof(losses));
    f->record.steps_done = 3;
    f->record.stopped = "training stopped at step 3: the loss is inf";
    const double w0[] = {-0.0, 5e-324, 1.7976931348623157e308, -1, 1.0 / 3, 3e-8};
    memcpy(f->w[0]->data, w0, sizeof(w0));
    uint64_t payload = 0x7ff8000000000abcull;
    memcpy(&f->w[1]->data[0], &payload, sizeof(double));
    f->w[1]->data[1] = -INFINITY;
    f->w[1]->data[2] = 1e-300;
    f->w[1]->data[3] = 42;
}

// The one file the store wrote, by its name: the key in hexadecimal, then .train.
static void file_path(const Fixture *f, char *path, size_t size) {
    char hex[2 * SHA256_BYTES + 1];
    sha256_hex(f->key, hex);
    snprintf(path, size, "%s/%s.train", f->dir, hex);
}

// A fresh record and tensors of the same shapes, all zeros, to load into.
typedef struct Target {
    Arena *arena;
    TraceTraining record;
    Tensor *w[2];
} Target;

static void target_init(Target *t, const Fixture *f) {
    t->arena = arena_create();
    assert_non_null(t->arena);
    t->record = (TraceTraining){.arena = t->arena, .steps = 5};
    t->record.losses = arena_array(t->arena, 5, sizeof(double));
    t->w[0] = tensor_create(&f->w[0]->shape);
    t->w[1] = tensor_create(&f->w[1]->shape);
}

static void target_finish(Target *t) {
    tensor_destroy(t->w[0]);
    tensor_destroy(t->w[1]);
    arena_destroy(t->arena);
}

static void assert_untouched(const Target *t) {
    assert_int_equal(t->record.steps_done, 0);
    assert_null(t->record.stopped);
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < t->w[k]->size; i++)
            assert_true(t->w[k]->data[i] == 0 && !signbit(t->w[k]->data[i]));
}

static void test_stored_then_read_bit_for_bit(void **state) {
    Fixture *f = *state;
    fill(f);
    char nested[128];
    snprintf(nested, sizeof(nested), "%s/a/b", f->dir);  // folders made as needed
    train_cache_store(nested, f->key, &f->record, f->w, 2);
    Target t;
    target_init(&t, f);
    assert_true(train_cache_load(nested, f->key, &t.record, t.w, 2));
    assert_int_equal(t.record.steps_done, 3);
    assert_memory_equal(t.record.losses, f->record.losses, 3 * sizeof(double));
    assert_string_equal(t.record.stopped, f->record.stopped);
    assert_memory_equal(t.w[0]->data, f->w[0]->data, 6 * sizeof(double));
    assert_memory_equal(t.w[1]->data, f->w[1]->data, 4 * sizeof(double));
    target_finish(&t);
    // Only the user may read the cache's folders.
    struct stat st;
    assert_int_equal(stat(nested, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
}

static void test_nothing_stored_is_a_miss(void **state) {
    Fixture *f = *state;
    Target t;
    target_init(&t, f);
    assert_false(train_cache_load(f->dir, f->key, &t.record, t.w, 2));
    assert_untouched(&t);
    target_finish(&t);
}

// Every way a file can be wrong leaves the target as it was.
static void test_a_file_that_does_not_fit_is_passed_over(void **state) {
    Fixture *f = *state;
    fill(f);
    train_cache_store(f->dir, f->key, &f->record, f->w, 2);
    char path[512];
    file_path(f, path, sizeof(path));
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    unsigned char bytes[4096];
    size_t len = fread(bytes, 1, sizeof(bytes), fp);
    fclose(fp);
    assert_true(len > 100 && len < sizeof(bytes));
    Target t;
    // Each byte changed in turn, and the file cut short at each length.
    for (size_t cut = 0; cut <= len; cut++) {
        for (int change = 0; change < 2; change++) {
            if (cut == len && change == 1)
                continue;
            unsigned char copy[4096];
            memcpy(copy, bytes, len);
            size_t n = change ? len : cut;
            if (change)
                copy[cut] ^= 0x10;
            fp = fopen(path, "wb");
            assert_non_null(fp);
            assert_int_equal(fwrite(copy, 1, n, fp), n);
            fclose(fp);
            target_init(&t, f);
            bool read = train_cache_load(f->dir, f->key, &t.record, t.w, 2);
            if (n == len && !change) {
                assert_true(read);  // the whole file, unchanged
            } else {
                if (read)
                    fail_msg("a file %s at byte %zu was read", change ? "changed" : "cut short", cut);
                assert_untouched(&t);
            }
            target_finish(&t);
        }
        if (cut == len)
            break;
    }
    // Whole and unchanged, but for another key, other sizes, or more steps than are asked for.
    fp = fopen(path, "wb");
    assert_non_null(fp);
    fwrite(bytes, 1, len, fp);
    fclose(fp);
    uint8_t other[SHA256_BYTES];
    memcpy(other, f->key, sizeof(other));
    other[0] ^= 1;
    char other_path[512];
    char hex[2 * SHA256_BYTES + 1];
    sha256_hex(other, hex);
    snprintf(other_path, sizeof(other_path), "%s/%s.train", f->dir, hex);
    assert_int_equal(rename(path, other_path), 0);  // a file under another's name
    target_init(&t, f);
    assert_false(train_cache_load(f->dir, other, &t.record, t.w, 2));
    assert_untouched(&t);
    target_finish(&t);
    assert_int_equal(rename(other_path, path), 0);
    target_init(&t, f);
    assert_false(train_cache_load(f->dir, f->key, &t.record, t.w, 1));  // one trained tensor, not two
    assert_untouched(&t);
    Shape wider = {.rank = 1, .dim = {5}};
    Tensor *keep = t.w[1];
    t.w[1] = tensor_create(&wider);
    assert_false(train_cache_load(f->dir, f->key, &t.record, t.w, 2));  // 5 values, not 4
    tensor_destroy(t.w[1]);
    t.w[1] = keep;
    assert_untouched(&t);
    t.record.steps = 2;  // a record of 2 steps cannot hold 3
    assert_false(train_cache_load(f->dir, f->key, &t.record, t.w, 2));
    assert_untouched(&t);
    target_finish(&t);
}

// A folder where the file should be, or a cache folder that cannot be made, is passed over.
static void test_a_cache_that_cannot_be_written_is_passed_over(void **state) {
    Fixture *f = *state;
    fill(f);
    char path[512], blocked[128];
    file_path(f, path, sizeof(path));
    assert_int_equal(mkdir(path, 0700), 0);
    train_cache_store(f->dir, f->key, &f->record, f->w, 2);
    Target t;
    target_init(&t, f);
    assert_false(train_cache_load(f->dir, f->key, &t.record, t.w, 2));
    target_finish(&t);
    snprintf(blocked, sizeof(blocked), "%s/file", f->dir);
    FILE *fp = fopen(blocked, "w");
    assert_non_null(fp);
    fclose(fp);
    char under[160];
    snprintf(under, sizeof(under), "%s/cache", blocked);  // a folder under a file
    train_cache_store(under, f->key, &f->record, f->w, 2);
    target_init(&t, f);
    assert_false(train_cache_load(under, f->key, &t.record, t.w, 2));
    target_finish(&t);
    // No temporary file is left behind.
    DIR *d = opendir(f->dir);
    assert_non_null(d);
    struct dirent *e;
    size_t entries = 0;
    while ((e = readdir(d)))
        entries += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    assert_int_equal(entries, 2);  // the folder named like the file, and the file
}

// A second tracer that asks for the lock while the first holds it waits until the first has
// stored its training and unlocked, then reads it: the child process takes the lock only after
// the parent, holding it, has slept and then stored. Without the lock the child would find
// nothing stored. A lock under a file that is no folder cannot be taken: -1, and unlocking
// it does nothing.
static void test_a_second_tracer_waits_for_the_first(void **state) {
    Fixture *f = *state;
    fill(f);
    int lock = train_cache_lock(f->dir, f->key);
    assert_true(lock >= 0);
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(lock);  // the parent's, inherited: a flock lasts while any copy is open
        int mine = train_cache_lock(f->dir, f->key);
        Target t;
        target_init(&t, f);
        bool found = mine >= 0 && train_cache_load(f->dir, f->key, &t.record, t.w, 2) && t.record.steps_done == 3;
        train_cache_unlock(mine);
        _exit(found ? 0 : 1);
    }
    nanosleep(&(struct timespec){.tv_nsec = 300 * 1000 * 1000}, NULL);
    train_cache_store(f->dir, f->key, &f->record, f->w, 2);
    train_cache_unlock(lock);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    // The lock can be taken again once released, and a second time by the same tracer.
    lock = train_cache_lock(f->dir, f->key);
    assert_true(lock >= 0);
    train_cache_unlock(lock);
    char blocked[128], under[160];
    snprintf(blocked, sizeof(blocked), "%s/file", f->dir);
    FILE *fp = fopen(blocked, "w");
    assert_non_null(fp);
    fclose(fp);
    snprintf(under, sizeof(under), "%s/cache", blocked);
    assert_int_equal(train_cache_lock(under, f->key), -1);
    train_cache_unlock(-1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_stored_then_read_bit_for_bit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_stored_is_a_miss, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_file_that_does_not_fit_is_passed_over, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_cache_that_cannot_be_written_is_passed_over, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_second_tracer_waits_for_the_first, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// train_cache: a training's result kept in a file named by what determines it.
#include "train_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ops.h"
#include "util.h"

// The first bytes of every file; the number changes whenever what follows them does.
static const char MAGIC[] = "tracer training cache 2\n";

// A training stored is at most this large (its trained values and losses): past it, passed over.
#define CACHE_MAX_BYTES ((size_t)1 << 31)

// ---------------------------------------------------------------- the key

static void add_u64(Sha256 *h, uint64_t v) {
    sha256_add(h, &v, sizeof(v));
}

static void add_text(Sha256 *h, const char *s, size_t len) {
    add_u64(h, len);
    sha256_add(h, s, len);
}

// The digest of the program's own file, read once: a tracer built from other code has
// another, so it never takes a training of this one's for its own.
static bool program_identity(uint8_t id[SHA256_BYTES]) {
    static uint8_t known[SHA256_BYTES];
    static int state;  // 0: not read yet, 1: read, -1: cannot be read
    if (state == 0) {
        state = -1;
        FILE *f = fopen("/proc/self/exe", "rb");
        if (f) {
            Sha256 h;
            sha256_init(&h);
            char buf[1 << 16];
            size_t n;
            while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
                sha256_add(&h, buf, n);
            if (!ferror(f)) {
                sha256_finish(&h, known);
                state = 1;
            }
            fclose(f);
        }
    }
    if (state == 1)
        memcpy(id, known, SHA256_BYTES);
    return state == 1;
}

// Where a node stands in a lesson, for which of its keys only narrate.
typedef enum Level {
    LEVEL_ANY,     // everything counts
    LEVEL_TOP,     // the lesson's own keys
    LEVEL_GIVENS,  // given: name -> given
    LEVEL_GIVEN,
    LEVEL_STEPS,   // a list of steps, the lesson's or a block's
    LEVEL_STEP,
    LEVEL_BLOCKS,  // blocks: name -> block
    LEVEL_BLOCK,
    LEVEL_TRAIN,
} Level;

// The keys at each level that change no number of training: text, labels, what to show.
static const char *const SKIP_TOP[] = {"title", "source", "intro", "outro", "digits", "claims", "download", "labels",
                                       NULL};
static const char *const SKIP_GIVEN[] = {"about", "rows", "cols", "document", NULL};
static const char *const SKIP_STEP[] = {"say", "rows", "cols", "document", "explain", "show", "claim", "quiz", NULL};
static const char *const SKIP_TRAIN[] = {"show", NULL};

static const char *const *skipped_at(Level level) {
    switch (level) {
    case LEVEL_TOP: return SKIP_TOP;
    case LEVEL_GIVEN: return SKIP_GIVEN;
    case LEVEL_STEP: return SKIP_STEP;
    case LEVEL_TRAIN: return SKIP_TRAIN;
    default: return NULL;
    }
}

static bool skipped(Level level, const Node *key) {
    const char *const *list = skipped_at(level);
    for (size_t i = 0; list && list[i]; i++)
        if (strlen(list[i]) == key->text_len && memcmp(list[i], key->text, key->text_len) == 0)
            return true;
    return false;
}

static bool key_is(const Node *key, const char *word) {
    return strlen(word) == key->text_len && memcmp(word, key->text, key->text_len) == 0;
}

// The level of the value under key in a mapping at level.
static Level level_below(Level level, const Node *key) {
    switch (level) {
    case LEVEL_TOP:
        return key_is(key, "given") ? LEVEL_GIVENS
               : key_is(key, "steps") ? LEVEL_STEPS
               : key_is(key, "blocks") ? LEVEL_BLOCKS
               : key_is(key, "train") ? LEVEL_TRAIN
                                      : LEVEL_ANY;
    case LEVEL_GIVENS: return LEVEL_GIVEN;
    case LEVEL_BLOCKS: return LEVEL_BLOCK;
    case LEVEL_BLOCK: return key_is(key, "steps") ? LEVEL_STEPS : LEVEL_ANY;
    default: return LEVEL_ANY;
    }
}

// Every node but the skipped keys' values, each tagged with its kind and length so that no
// two different trees add the same bytes.
static void add_node(Sha256 *h, const Node *node, Level level) {
    if (!node) {
        sha256_add(h, "0", 1);
        return;
    }
    switch (node->kind) {
    case NODE_SCALAR:
        sha256_add(h, "s", 1);
        add_u64(h, node->style);
        add_text(h, node->text, node->text_len);
        break;
    case NODE_SEQUENCE:
        sha256_add(h, "l", 1);
        add_u64(h, node->n_items);
        for (size_t i = 0; i < node->n_items; i++)
            add_node(h, node->items[i], level == LEVEL_STEPS ? LEVEL_STEP : LEVEL_ANY);
        break;
    case NODE_MAPPING: {
        size_t kept = 0;
        for (size_t i = 0; i < node->n_pairs; i++)
            kept += !skipped(level, node->pairs[i].key);
        sha256_add(h, "m", 1);
        add_u64(h, kept);
        for (size_t i = 0; i < node->n_pairs; i++) {
            const NodePair *p = &node->pairs[i];
            if (skipped(level, p->key))
                continue;
            add_node(h, p->key, LEVEL_ANY);
            add_node(h, p->value, level_below(level, p->key));
        }
        break;
    }
    }
}

bool train_cache_key(const Lesson *lesson, const Plan *plan, const bool *needed, Tensor *const *values, size_t loss,
                     uint8_t key[SHA256_BYTES]) {
    uint8_t id[SHA256_BYTES];
    if (!program_identity(id))
        return false;
    Sha256 h;
    sha256_init(&h);
    sha256_add(&h, MAGIC, sizeof(MAGIC) - 1);
    sha256_add(&h, id, sizeof(id));
    add_node(&h, lesson->doc->root, LEVEL_TOP);
    // The nodes as checked: what the YAML does not say (sizes from a file's config, values
    // read from files or from --text) is in their shapes and values.
    for (size_t i = 0; i <= loss && i < plan->n_nodes; i++) {
        if (!needed[i])
            continue;
        const PlanNode *node = &plan->nodes[i];
        add_u64(&h, i);
        add_text(&h, node->name ? node->name : "", node->name ? strlen(node->name) : 0);
        add_u64(&h, node->kind);
        const char *op = node->kind == PLAN_OP && node->op ? node->op->name : "";
        add_text(&h, op, strlen(op));
        add_u64(&h, node->shape.rank);
        for (size_t k = 0; k < node->shape.rank; k++)
            add_u64(&h, node->shape.dim[k]);
        add_u64(&h, node->is_count);
        for (size_t k = 0; k < node->n_args; k++)
            add_u64(&h, node->args[k]);
        if ((node->kind == PLAN_GIVEN || node->kind == PLAN_CONSTANT) && values[i]) {
            add_u64(&h, values[i]->size);
            sha256_add(&h, values[i]->data, values[i]->size * sizeof(double));
        }
    }
    // A text drawn from is read from its file, which the lesson only names.
    for (size_t k = 0; lesson->train && k < lesson->train->n_data; k++) {
        const LessonTrainData *d = &lesson->train->data[k];
        if (d->draw == TRAIN_DRAW_TEXT)
            add_text(&h, (const char *)d->text, d->text_len);
    }
    sha256_finish(&h, key);
    return true;
}

// ---------------------------------------------------------------- the file

static char *cache_path(const char *dir, const uint8_t key[SHA256_BYTES], const char *suffix) {
    char hex[2 * SHA256_BYTES + 1];
    sha256_hex(key, hex);
    size_t len = strlen(dir) + 1 + sizeof(hex) + strlen(suffix) + 1;
    char *path = util_malloc(len);
    if (path)
        snprintf(path, len, "%s/%s%s", dir, hex, suffix);
    return path;
}

// Reads past the end of what is there fail: a file cut short is never taken for a whole one.
typedef struct Reader {
    const uint8_t *at, *end;
} Reader;

static bool take(Reader *r, void *out, size_t n) {
    if ((size_t)(r->end - r->at) < n)
        return false;
    memcpy(out, r->at, n);
    r->at += n;
    return true;
}

static bool take_u64(Reader *r, uint64_t *v) {
    return take(r, v, sizeof(*v));
}

// The whole file at path, if it is a regular file of a sensible size; NULL otherwise.
static uint8_t *read_whole(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    uint8_t *bytes = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (size_t)st.st_size <= CACHE_MAX_BYTES &&
        (bytes = util_malloc((size_t)st.st_size))) {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t n = read(fd, bytes + got, (size_t)st.st_size - got);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            got += (size_t)n;
        }
        if (got != (size_t)st.st_size) {
            util_free(bytes);
            bytes = NULL;
        }
        *len = got;
    }
    close(fd);
    return bytes;
}

bool train_cache_load(const char *dir, const uint8_t key[SHA256_BYTES], TraceTraining *record, Tensor *const *trained,
                      size_t n_trained) {
    char *path = cache_path(dir, key, ".train");
    size_t len = 0;
    uint8_t *bytes = path ? read_whole(path, &len) : NULL;
    util_free(path);
    if (!bytes)
        return false;
    bool ok = len > SHA256_BYTES;
    if (ok) {
        // The file's own digest at its end: anything changed or cut short is passed over.
        uint8_t digest[SHA256_BYTES];
        Sha256 h;
        sha256_init(&h);
        sha256_add(&h, bytes, len - SHA256_BYTES);
        sha256_finish(&h, digest);
        ok = memcmp(digest, bytes + len - SHA256_BYTES, SHA256_BYTES) == 0;
    }
    Reader r = {bytes, bytes + len - (ok ? SHA256_BYTES : 0)};
    char magic[sizeof(MAGIC) - 1];
    uint8_t stored_key[SHA256_BYTES];
    uint64_t steps_done = 0, stopped_len = 0, n = 0;
    ok = ok && take(&r, magic, sizeof(magic)) && memcmp(magic, MAGIC, sizeof(magic)) == 0 &&
         take(&r, stored_key, sizeof(stored_key)) && memcmp(stored_key, key, SHA256_BYTES) == 0 &&
         take_u64(&r, &steps_done) && steps_done <= record->steps && take_u64(&r, &stopped_len) &&
         stopped_len <= (size_t)(r.end - r.at);
    const char *stopped = ok ? (const char *)r.at : NULL;
    if (ok)
        r.at += stopped_len;
    ok = ok && take_u64(&r, &n) && n == n_trained;
    // Every size is checked before any value is taken: a file that does not fit changes nothing.
    const uint8_t *values_at = r.at;
    for (size_t k = 0; ok && k < n_trained; k++) {
        uint64_t size;
        ok = take_u64(&r, &size) && size == trained[k]->size && size <= (size_t)(r.end - r.at) / sizeof(double);
        if (ok)
            r.at += size * sizeof(double);
    }
    // The losses, then with a held-out text the validation losses: how many, their steps and
    // values, and the one after training.
    TraceValidation *v = record->validation;
    uint64_t n_val = 0;
    ok = ok && (size_t)(r.end - r.at) / sizeof(double) >= steps_done;
    if (ok)
        r.at += steps_done * sizeof(double);
    if (ok && v)
        ok = take_u64(&r, &n_val) && n_val <= LESSON_TRAIN_MAX_SHOWN &&
             (size_t)(r.end - r.at) == n_val * 2 * sizeof(uint64_t) + sizeof(double);
    else
        ok = ok && r.at == r.end;
    char *stopped_copy = NULL;
    if (ok && stopped_len)
        ok = (stopped_copy = arena_strndup(record->arena, stopped, stopped_len)) != NULL;
    if (ok) {
        r.at = values_at;
        for (size_t k = 0; k < n_trained; k++) {
            r.at += sizeof(uint64_t);  // its size, checked above
            take(&r, trained[k]->data, trained[k]->size * sizeof(double));
        }
        take(&r, record->losses, steps_done * sizeof(double));
        if (v) {
            r.at += sizeof(uint64_t);  // n_val, read above
            for (size_t i = 0; i < n_val; i++) {
                uint64_t step = 0;
                take_u64(&r, &step);
                v->steps[i] = (size_t)step;
            }
            take(&r, v->losses, n_val * sizeof(double));
            take(&r, &v->after, sizeof(double));
            v->n = (size_t)n_val;
        }
        record->steps_done = steps_done;
        record->stopped = stopped_copy;
    }
    util_free(bytes);
    return ok;
}

// ---------------------------------------------------------------- storing

// dir and its parents, made as needed (only for the user: a cache is no one else's).
static bool make_folders(const char *dir) {
    char *path = util_strdup(dir);
    if (!path)
        return false;
    bool ok = true;
    for (char *p = path + 1; ok; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char was = *p;
        *p = '\0';
        ok = mkdir(path, 0700) == 0 || errno == EEXIST;
        *p = was;
        if (!was)
            break;
    }
    util_free(path);
    return ok;
}

typedef struct Writer {
    Sha256 h;
    FILE *f;
    bool ok;
} Writer;

static void put(Writer *w, const void *bytes, size_t n) {
    sha256_add(&w->h, bytes, n);
    w->ok = w->ok && fwrite(bytes, 1, n, w->f) == n;
}

static void put_u64(Writer *w, uint64_t v) {
    put(w, &v, sizeof(v));
}

void train_cache_store(const char *dir, const uint8_t key[SHA256_BYTES], const TraceTraining *record,
                       Tensor *const *trained, size_t n_trained) {
    char *path = cache_path(dir, key, ".train");
    char *temp = cache_path(dir, key, ".XXXXXX");
    int fd = -1;
    if (path && temp && make_folders(dir))
        fd = mkstemp(temp);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (fd >= 0 && !f)
        close(fd);
    if (f) {
        Writer w = {.f = f, .ok = true};
        sha256_init(&w.h);
        put(&w, MAGIC, sizeof(MAGIC) - 1);
        put(&w, key, SHA256_BYTES);
        put_u64(&w, record->steps_done);
        size_t stopped_len = record->stopped ? strlen(record->stopped) : 0;
        put_u64(&w, stopped_len);
        put(&w, record->stopped ? record->stopped : "", stopped_len);
        put_u64(&w, n_trained);
        for (size_t k = 0; k < n_trained; k++) {
            put_u64(&w, trained[k]->size);
            put(&w, trained[k]->data, trained[k]->size * sizeof(double));
        }
        put(&w, record->losses, record->steps_done * sizeof(double));
        const TraceValidation *v = record->validation;
        if (v) {
            put_u64(&w, v->n);
            for (size_t i = 0; i < v->n; i++)
                put_u64(&w, v->steps[i]);
            put(&w, v->losses, v->n * sizeof(double));
            put(&w, &v->after, sizeof(double));
        }
        uint8_t digest[SHA256_BYTES];
        sha256_finish(&w.h, digest);
        w.ok = w.ok && fwrite(digest, 1, sizeof(digest), f) == sizeof(digest);
        w.ok = fclose(f) == 0 && w.ok;
        if (!w.ok || rename(temp, path) != 0)
            unlink(temp);
    }
    util_free(path);
    util_free(temp);
}

// ---------------------------------------------------------------- the lock

int train_cache_lock(const char *dir, const uint8_t key[SHA256_BYTES]) {
    char *path = cache_path(dir, key, ".lock");
    int fd = path && make_folders(dir) ? open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600) : -1;
    util_free(path);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        return -1;
    }
    int r;
    do
        r = fd >= 0 ? flock(fd, LOCK_EX) : 0;
    while (r != 0 && errno == EINTR);
    if (fd >= 0 && r != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

void train_cache_unlock(int lock) {
    if (lock >= 0)
        close(lock);  // closing the only descriptor releases the flock
}

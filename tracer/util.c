// util: the one allocation wrapper, arenas and growable strings.
#include "util.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

// ---------------------------------------------------------------- allocation

static size_t alloc_count;      // allocations since the last util_fail_allocation call
static size_t alloc_fail_at;    // 0: never fail; otherwise fail when alloc_count reaches it

static bool allocation_allowed(void) {
    alloc_count++;
    return alloc_fail_at == 0 || alloc_count != alloc_fail_at;
}

size_t util_fail_allocation(size_t n) {
    size_t made = alloc_count;
    alloc_count = 0;
    alloc_fail_at = n;
    return made;
}

void *util_malloc(size_t size) {
    if (!allocation_allowed())
        return NULL;
    return malloc(size ? size : 1);
}

void *util_calloc(size_t count, size_t size) {
    size_t total;
    if (!util_mul_size(count, size, &total) || !allocation_allowed())
        return NULL;
    return calloc(total ? total : 1, 1);
}

void *util_realloc(void *ptr, size_t size) {
    if (!allocation_allowed())
        return NULL;
    return realloc(ptr, size ? size : 1);
}

void util_free(void *ptr) {
    free(ptr);
}

char *util_strdup(const char *s) {
    size_t n = strlen(s);
    char *copy = util_malloc(n + 1);
    if (copy)
        memcpy(copy, s, n + 1);
    return copy;
}

bool util_mul_size(size_t a, size_t b, size_t *out) {
    if (a != 0 && b > SIZE_MAX / a)
        return false;
    *out = a * b;
    return true;
}

bool util_add_size(size_t a, size_t b, size_t *out) {
    if (b > SIZE_MAX - a)
        return false;
    *out = a + b;
    return true;
}

// ---------------------------------------------------------------- arena

// Blocks are chained; a request larger than the block size gets a block of its own.
typedef struct ArenaBlock {
    struct ArenaBlock *next;
    size_t used, cap;
    max_align_t data[];
} ArenaBlock;

struct Arena {
    ArenaBlock *head;
};

enum { ARENA_BLOCK = 16 * 1024 };
static size_t arena_block = ARENA_BLOCK;

void util_arena_block_size(size_t bytes) {
    arena_block = bytes ? bytes : ARENA_BLOCK;
}

Arena *arena_create(void) {
    return util_calloc(1, sizeof(Arena));
}

void arena_destroy(Arena *arena) {
    if (!arena)
        return;
    for (ArenaBlock *b = arena->head, *next; b; b = next) {
        next = b->next;
        util_free(b);
    }
    util_free(arena);
}

void *arena_alloc(Arena *arena, size_t size) {
    const size_t align = sizeof(max_align_t);
    size_t rounded;
    if (!util_add_size(size, align - 1, &rounded))
        return NULL;
    rounded &= ~(align - 1);
    if (rounded == 0)
        rounded = align;
    ArenaBlock *b = arena->head;
    if (!b || b->cap - b->used < rounded) {
        size_t cap = rounded > arena_block ? rounded : arena_block, total;
        if (!util_add_size(cap, sizeof(ArenaBlock), &total))
            return NULL;
        b = util_malloc(total);
        if (!b)
            return NULL;
        b->used = 0;
        b->cap = cap;
        b->next = arena->head;
        arena->head = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += rounded;
    memset(p, 0, size);
    return p;
}

void *arena_array(Arena *arena, size_t count, size_t size) {
    size_t total;
    if (!util_mul_size(count, size, &total))
        return NULL;
    return arena_alloc(arena, total);
}

char *arena_strndup(Arena *arena, const char *s, size_t n) {
    char *copy = arena_alloc(arena, n + 1);
    if (copy) {
        memcpy(copy, s, n);
        copy[n] = '\0';
    }
    return copy;
}

char *arena_strdup(Arena *arena, const char *s) {
    return arena_strndup(arena, s, strlen(s));
}

char *arena_printf(Arena *arena, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = arena_alloc(arena, (size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

// ---------------------------------------------------------------- growable string

void strbuf_init(StrBuf *sb) {
    memset(sb, 0, sizeof(*sb));
}

void strbuf_finish(StrBuf *sb) {
    util_free(sb->data);
    memset(sb, 0, sizeof(*sb));
}

void strbuf_clear(StrBuf *sb) {
    sb->len = 0;
    if (sb->data)
        sb->data[0] = '\0';
}

static bool strbuf_reserve(StrBuf *sb, size_t extra) {
    size_t need;
    if (sb->failed || !util_add_size(sb->len, extra, &need) || !util_add_size(need, 1, &need)) {
        sb->failed = true;
        return false;
    }
    if (need <= sb->cap)
        return true;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    char *data = util_realloc(sb->data, cap);
    if (!data) {
        sb->failed = true;
        return false;
    }
    sb->data = data;
    sb->cap = cap;
    return true;
}

bool strbuf_flush(StrBuf *sb) {
    if (!sb->sink || sb->failed)
        return !sb->failed;
    if (sb->len && fwrite(sb->data, 1, sb->len, sb->sink) != sb->len) {
        sb->sink_errno = errno ? errno : EIO;
        sb->failed = true;
    }
    sb->len = 0;
    if (sb->data)
        sb->data[0] = '\0';
    return !sb->failed;
}

// With a sink, text leaves for it whenever a chunk has gathered: memory stays constant.
static void strbuf_wrote(StrBuf *sb) {
    if (sb->sink && sb->len >= STRBUF_SINK_CHUNK)
        strbuf_flush(sb);
}

void strbuf_append(StrBuf *sb, const char *s, size_t n) {
    if (!strbuf_reserve(sb, n))
        return;
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
    strbuf_wrote(sb);
}

void strbuf_puts(StrBuf *sb, const char *s) {
    strbuf_append(sb, s, strlen(s));
}

void strbuf_putc(StrBuf *sb, char c) {
    strbuf_append(sb, &c, 1);
}

void strbuf_vprintf(StrBuf *sb, const char *fmt, va_list ap) {
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0) {
        sb->failed = true;
        return;
    }
    if (!strbuf_reserve(sb, (size_t)n))
        return;
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
    strbuf_wrote(sb);
}

void strbuf_printf(StrBuf *sb, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(sb, fmt, ap);
    va_end(ap);
}

const char *strbuf_str(const StrBuf *sb) {
    return sb->data && sb->len ? sb->data : "";
}

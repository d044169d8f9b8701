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

// ---------------------------------------------------------------- the C library, or small blocks

// A fast layer's allocator of small blocks (util_install_small_blocks), or NULL.
static const UtilSmallBlocks *small;

void util_install_small_blocks(const UtilSmallBlocks *blocks) {
    small = blocks;
}

static void *small_alloc(size_t size) {
    return small ? small->alloc(size) : NULL;
}

static bool is_small(const void *ptr) {
    return small && ptr && small->owns(ptr);
}

void *util_malloc(size_t size) {
    if (!allocation_allowed())
        return NULL;
    void *p = small_alloc(size);
    return p ? p : malloc(size ? size : 1);
}

void *util_calloc(size_t count, size_t size) {
    size_t total;
    if (!util_mul_size(count, size, &total) || !allocation_allowed())
        return NULL;
    void *p = small_alloc(total);
    if (p) {
        memset(p, 0, total);  // a freed block holds what it held
        return p;
    }
    return calloc(total ? total : 1, 1);
}

void *util_realloc(void *ptr, size_t size) {
    if (!allocation_allowed())
        return NULL;
    if (!is_small(ptr)) {
        if (ptr)
            return realloc(ptr, size ? size : 1);
        void *p = small_alloc(size);
        return p ? p : malloc(size ? size : 1);
    }
    size_t had = small->size(ptr);
    if (size <= had)
        return ptr;
    void *p = small_alloc(size);
    if (!p && !(p = malloc(size)))
        return NULL;
    memcpy(p, ptr, had);
    small->release(ptr);
    return p;
}

void util_free(void *ptr) {
    if (is_small(ptr))
        small->release(ptr);
    else
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

uint64_t util_hash_string(const char *s) {
    uint64_t h = 14695981039346656037u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
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
    size_t bytes;  // of all its blocks
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

void arena_clear(Arena *arena) {
    ArenaBlock *keep = arena->head;
    if (!keep)
        return;
    for (ArenaBlock *b = keep->next, *next; b; b = next) {
        next = b->next;
        util_free(b);
    }
    keep->next = NULL;
    keep->used = 0;
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
        arena->bytes += total;  // no overflow: the blocks are all in memory at once
    }
    void *p = (char *)b->data + b->used;
    b->used += rounded;
    memset(p, 0, size);
    return p;
}

size_t arena_bytes(const Arena *arena) {
    return arena->bytes;
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

// Printed once into a buffer on the stack, which nearly every name and note fits; only longer
// text is printed a second time, into room made for it.
char *arena_printf(Arena *arena, const char *fmt, ...) {
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = arena_alloc(arena, (size_t)n + 1);
    if (!s)
        return NULL;
    if ((size_t)n < sizeof(buf)) {
        memcpy(s, buf, (size_t)n + 1);
        return s;
    }
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

void strbuf_repeat(StrBuf *sb, const char *s, size_t n) {
    size_t len = strlen(s), total;
    if (!util_mul_size(len, n, &total) || !strbuf_reserve(sb, total)) {
        sb->failed = true;
        return;
    }
    char *at = sb->data + sb->len;
    if (len == 1)
        memset(at, s[0], n);
    else
        for (size_t i = 0; i < n; i++)
            memcpy(at + i * len, s, len);
    sb->len += total;
    sb->data[sb->len] = '\0';
    strbuf_wrote(sb);
}

void strbuf_putc(StrBuf *sb, char c) {
    if (!sb->failed && sb->len + 2 <= sb->cap) {  // room for it and the NUL: the common case
        sb->data[sb->len++] = c;
        sb->data[sb->len] = '\0';
        strbuf_wrote(sb);
        return;
    }
    strbuf_append(sb, &c, 1);
}

// Printed once into the room the buffer has; only text that does not fit is printed again,
// into a buffer grown for it.
void strbuf_vprintf(StrBuf *sb, const char *fmt, va_list ap) {
    if (sb->failed)
        return;
    size_t room = sb->cap > sb->len ? sb->cap - sb->len : 0;
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(room ? sb->data + sb->len : NULL, room, fmt, copy);
    va_end(copy);
    if (n < 0) {
        sb->failed = true;
        if (room)
            sb->data[sb->len] = '\0';
        return;
    }
    if ((size_t)n >= room) {
        if (!strbuf_reserve(sb, (size_t)n)) {
            if (room)
                sb->data[sb->len] = '\0';
            return;
        }
        vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    }
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

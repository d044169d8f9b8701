// util: allocation (one wrapper, with a failure-injection hook for tests), arenas,
// growable strings, overflow-checked size arithmetic and the ASSERT macro.
//
//     Arena *a = arena_create();
//     char *s = arena_printf(a, "%zu tokens", n);   // NULL when memory runs out
//     arena_destroy(a);                              // frees everything it handed out
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// Programming errors (never user errors) stop the program with the place they were found.
#define ASSERT(cond)                                                                       \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: internal error: assertion '%s' failed\n", __FILE__,    \
                    __LINE__, #cond);                                                      \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

// Every heap allocation of the tracer goes through these; they return NULL on failure.
void *util_malloc(size_t size);
void *util_calloc(size_t count, size_t size);  // NULL also when count * size overflows
void *util_realloc(void *ptr, size_t size);
void util_free(void *ptr);
char *util_strdup(const char *s);

// Where a fast layer may serve small blocks instead of the C library (fast/pool.c): alloc
// gives a block of at least size bytes, or NULL to leave it to the C library; owns tells its
// blocks from the library's; size is how many bytes a block of its holds; release takes one
// back. Installed before the first allocation, and never taken away while a block is out.
typedef struct UtilSmallBlocks {
    void *(*alloc)(size_t size);
    bool (*owns)(const void *ptr);
    size_t (*size)(const void *ptr);
    void (*release)(void *ptr);
} UtilSmallBlocks;
void util_install_small_blocks(const UtilSmallBlocks *blocks);

// Test hook: the allocation `n` calls from now fails (1 = the next one); 0 turns it off.
// Returns how many allocations have been made since the last call, so a test can
// first count the allocations of a run and then fail each one in turn.
size_t util_fail_allocation(size_t n);
// Test hook: arenas take blocks of at least `bytes` (0: the usual 16 KiB). With 1, every arena
// allocation is an allocation of its own, so that failing each in turn reaches them all.
void util_arena_block_size(size_t bytes);

// a * b and a + b without wrapping; false when the result does not fit in size_t.
bool util_mul_size(size_t a, size_t b, size_t *out);
bool util_add_size(size_t a, size_t b, size_t *out);

// A string's FNV-1a hash, for tables of names.
uint64_t util_hash_string(const char *s);

// ---------------------------------------------------------------- arena

typedef struct Arena Arena;

Arena *arena_create(void);
void arena_destroy(Arena *arena);  // accepts NULL
// Forget everything allocated, keeping the newest block for what comes next: a loop that
// allocates the same each time allocates nothing new after its first turn.
void arena_clear(Arena *arena);
void *arena_alloc(Arena *arena, size_t size);  // zeroed, aligned for any type; NULL on failure
void *arena_array(Arena *arena, size_t count, size_t size);  // checks count * size
char *arena_strdup(Arena *arena, const char *s);
char *arena_strndup(Arena *arena, const char *s, size_t n);
char *arena_printf(Arena *arena, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
size_t arena_bytes(const Arena *arena);  // what its blocks hold, in bytes, headers included

// ---------------------------------------------------------------- growable string

// A failed append marks the buffer `failed` and drops the rest; check once at the end.
// With a sink (set after strbuf_init), the text is written there each time STRBUF_SINK_CHUNK
// bytes gather, and the rest by strbuf_flush: a trace of gigabytes in constant memory. A
// failed write sets `failed` and sink_errno.
typedef struct StrBuf {
    char *data;  // always NUL-terminated when len > 0
    size_t len;
    size_t cap;
    bool failed;
    FILE *sink;      // NULL: keep everything in data
    int sink_errno;  // why writing to sink failed; 0 when it did not
} StrBuf;

#define STRBUF_SINK_CHUNK ((size_t)1 << 16)

void strbuf_init(StrBuf *sb);
void strbuf_finish(StrBuf *sb);
void strbuf_clear(StrBuf *sb);  // empty again, keeping the memory
void strbuf_append(StrBuf *sb, const char *s, size_t n);
void strbuf_puts(StrBuf *sb, const char *s);
void strbuf_putc(StrBuf *sb, char c);
void strbuf_repeat(StrBuf *sb, const char *s, size_t n);  // s, n times: rules and padding
void strbuf_printf(StrBuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vprintf(StrBuf *sb, const char *fmt, va_list ap);
const char *strbuf_str(const StrBuf *sb);  // "" when empty
// Write what has gathered to the sink (nothing without one); false once anything failed.
bool strbuf_flush(StrBuf *sb);

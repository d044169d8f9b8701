// pool: the fast layer's small blocks, from one region backed by huge pages (util.h's
// UtilSmallBlocks), so that a hand-sized lesson does not fault in its heap a page at a time.
#define _DEFAULT_SOURCE  // MAP_ANONYMOUS and MADV_HUGEPAGE
#include "pool.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "util.h"

// A lesson makes thousands of small allocations: names, nodes, arena blocks, hand-sized
// tensors. From the C library's heap, each new 4 KiB page they reach is a page fault of its own,
// and on a virtual machine a fault can cost 10 µs and more: a hand-sized lesson spent a
// millisecond or two in them. Blocks up to POOL_LARGEST bytes come instead from one region that
// the kernel is asked to back with huge pages of 2 MiB (MADV_HUGEPAGE), each faulted in at once;
// a hand-sized lesson fits in the first. Each block starts with a 16-byte header naming its
// size class; a freed block goes on its class's list for the next allocation of that class.
// When the region is full, or cannot be had, blocks come from the C library as before. Under
// AddressSanitizer every block comes from the C library, so that each keeps its own bounds.
// Like util's failure-injection hook, the pool takes no lock: only the calling thread
// allocates through util (the chunks of parallel_for do not, see parallel.h).

#if defined(__SANITIZE_ADDRESS__)
#define POOL_ENABLED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_ENABLED 0
#endif
#endif
#ifndef POOL_ENABLED
#define POOL_ENABLED 1
#endif

#define POOL_HUGE_PAGE ((size_t)2 << 20)  // on x86-64 and arm64
#define POOL_SIZE (4 * POOL_HUGE_PAGE)         // reserved; a page is touched only when reached
#define POOL_HEADER 16                         // keeps every block aligned as malloc's are
#define POOL_LARGEST ((size_t)256 << 10)       // a lesson's plan of 256 nodes is 180 KiB
// 16 to 1024 bytes in steps of 16, then four classes in each doubling up to POOL_LARGEST
#define POOL_CLASSES (64 + 4 * 8)

typedef struct PoolBlock {
    struct PoolBlock *next;  // on its class's free list
} PoolBlock;

static struct {
    char *base;            // NULL: not made yet, or the C library serves everything
    size_t used;
    bool tried;
    PoolBlock *free[POOL_CLASSES];
} pool;

static size_t class_size(size_t c) {
    if (c < 64)
        return (c + 1) * 16;
    size_t doubling = (c - 64) / 4, step = (c - 64) % 4;
    size_t from = (size_t)1024 << doubling;
    return from + (step + 1) * (from / 4);
}

static size_t class_of(size_t size) {
    if (size <= 1024)
        return size == 0 ? 0 : (size - 1) / 16;
    size_t c = 64;
    while (class_size(c) < size)
        c++;
    return c;
}

// The region, aligned to a huge page (so that huge pages can back it), cut from a mapping one
// huge page larger.
static void pool_make(void) {
    pool.tried = true;
    size_t span = POOL_SIZE + POOL_HUGE_PAGE;
    char *map = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return;
    char *base = (char *)(((uintptr_t)map + POOL_HUGE_PAGE - 1) & ~(uintptr_t)(POOL_HUGE_PAGE - 1));
    if (base > map)
        munmap(map, (size_t)(base - map));
    if (base + POOL_SIZE < map + span)
        munmap(base + POOL_SIZE, (size_t)(map + span - (base + POOL_SIZE)));
#ifdef MADV_HUGEPAGE
    madvise(base, POOL_SIZE, MADV_HUGEPAGE);  // a request: without it the region still serves
#endif
    pool.base = base;
}

static bool in_pool(const void *ptr) {
    return POOL_ENABLED && pool.base && (uintptr_t)ptr - (uintptr_t)pool.base < POOL_SIZE;
}

// A block of at least size bytes from the region; NULL when it has none.
static void *pool_alloc(size_t size) {
    if (!POOL_ENABLED || size > POOL_LARGEST)
        return NULL;
    size_t c = class_of(size);
    if (!pool.tried)
        pool_make();
    char *block = NULL;
    if (pool.free[c]) {
        block = (char *)pool.free[c] - POOL_HEADER;
        pool.free[c] = pool.free[c]->next;
    } else if (pool.base && POOL_SIZE - pool.used >= POOL_HEADER + class_size(c)) {
        block = pool.base + pool.used;
        pool.used += POOL_HEADER + class_size(c);
        memcpy(block, &c, sizeof(c));
    }
    return block ? block + POOL_HEADER : NULL;
}

static size_t pool_block_size(const void *ptr) {
    size_t c;
    memcpy(&c, (const char *)ptr - POOL_HEADER, sizeof(c));
    return class_size(c);
}

static void pool_free(void *ptr) {
    size_t c;
    memcpy(&c, (char *)ptr - POOL_HEADER, sizeof(c));
    PoolBlock *b = ptr;
    b->next = pool.free[c];
    pool.free[c] = b;
}

static const UtilSmallBlocks pool_blocks = {
    .alloc = pool_alloc,
    .owns = in_pool,
    .size = pool_block_size,
    .release = pool_free,
};

void pool_install(void) {
    util_install_small_blocks(&pool_blocks);
}

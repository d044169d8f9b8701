// sha256: the SHA-256 digest (FIPS 180-4), for naming a result by the exact content that
// determines it (the training cache, run/train_cache.h).
//
//     Sha256 h;
//     sha256_init(&h);
//     sha256_add(&h, bytes, len);        // as many times as there are pieces
//     uint8_t digest[SHA256_BYTES];
//     sha256_finish(&h, digest);
#pragma once

#include <stddef.h>
#include <stdint.h>

#define SHA256_BYTES 32

typedef struct Sha256 {
    uint32_t state[8];
    uint64_t length;     // bytes added so far
    uint8_t block[64];   // the block being filled
    size_t filled;
} Sha256;

void sha256_init(Sha256 *h);
void sha256_add(Sha256 *h, const void *bytes, size_t len);
void sha256_finish(Sha256 *h, uint8_t digest[SHA256_BYTES]);
// The digest as 64 lowercase hexadecimal digits and a NUL.
void sha256_hex(const uint8_t digest[SHA256_BYTES], char hex[2 * SHA256_BYTES + 1]);

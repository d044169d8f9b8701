// The bytes of an .npy file, written by the tests of the weight-file readers.
#pragma once

#include <stddef.h>
#include <string.h>

// An .npy file of version 1: magic, version, header length, the header padded, the values.
static inline size_t npy(unsigned char *out, const char *header, const void *values, size_t n) {
    size_t h = strlen(header);
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (unsigned char)(h & 0xFF);
    out[9] = (unsigned char)(h >> 8);
    memcpy(out + 10, header, h);
    memcpy(out + 10 + h, values, n);
    return 10 + h + n;
}

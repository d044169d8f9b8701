// utf8: the UTF-8 that GPT-2's tokenizer reads in its files and in the text it encodes.
//
//     size_t n = utf8_len(s, len);   // 0: s does not start with a whole, shortest character
//     size_t i = 0;
//     uint32_t cp = utf8_next(text, &i);   // text at i must be whole UTF-8
#pragma once

#include <stddef.h>
#include <stdint.h>

// How many bytes the UTF-8 character at s[0, len) has (len > 0); 0 when it is not whole,
// shortest UTF-8 of a code point that is not a surrogate.
size_t utf8_len(const unsigned char *s, size_t len);
// The code point at text[*i] (which must be whole UTF-8), moving *i past it.
uint32_t utf8_next(const char *text, size_t *i);
// The offset of the first byte of text that is not UTF-8 (len when all of it is).
size_t utf8_end(const char *text, size_t len);

// fuzz_tokenizer: libFuzzer target for GPT-2's tokenizer: its vocabulary and merges parsers,
// and the encoder on what they accept. An input is three parts separated by the byte 0x01:
// the vocabulary (JSON), the merges, and a text.
//
//     build-fuzz/tests/fuzz/fuzz_tokenizer -max_len=4096 build-fuzz/tok tests/fuzz/tokenizer_seeds
//
// Every input must end in a tokenizer or a located error, and every text in ids whose tokens'
// bytes are the text again (or in its refusal as not UTF-8), and every token's label the same
// made alone or with all the others: a crash, a sanitizer report, a
// leak or a wrong round trip is a finding. Findings go into tests/fuzz/tokenizer_seeds.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

// The part of [*at, end) up to the next 0x01, and *at past it.
static const char *part(const uint8_t *data, size_t size, size_t *at, size_t *len) {
    const uint8_t *start = data + *at;
    const uint8_t *stop = memchr(start, 0x01, size - *at);
    *len = stop ? (size_t)(stop - start) : size - *at;
    *at += *len + (stop != NULL);
    return (const char *)start;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t at = 0, vocab_len, merges_len, text_len;
    const char *vocab = part(data, size, &at, &vocab_len);
    const char *merges = part(data, size, &at, &merges_len);
    const char *text = part(data, size, &at, &text_len);
    Diag diag;
    diag_init(&diag);
    Tokenizer *tok = tokenizer_create("vocab.json", vocab, vocab_len, "merges.txt", merges,
                                      merges_len, &diag);
    if (!tok) {
        if (diag.status == STATUS_OK)
            __builtin_trap();  // a refusal must say why
        return 0;
    }
    if (tokenizer_utf8_end(text, text_len) != text_len)
        text_len = tokenizer_utf8_end(text, text_len);  // the UTF-8 before the first bad byte
    TokenIds ids = {0};
    if (tokenizer_encode(tok, text, text_len, &ids, &diag) != STATUS_OK)
        __builtin_trap();
    // The tokens' bytes, one after another, are the text.
    size_t done = 0;
    Arena *arena = arena_create();
    for (size_t i = 0; i < ids.n; i++) {
        size_t len;
        const char *bytes = tokenizer_bytes(tok, ids.ids[i], &len);
        if (done + len > text_len || memcmp(bytes, text + done, len) != 0)
            __builtin_trap();
        done += len;
        if (arena && !tokenizer_label(tok, ids.ids[i], arena))
            __builtin_trap();
    }
    if (done != text_len)
        __builtin_trap();
    // Every label made at once, most of them the tokens' own bytes, reads as the one made alone.
    const char **labels = tokenizer_labels(tok);
    for (size_t id = 0; arena && labels && id < tokenizer_size(tok); id++) {
        const char *alone = tokenizer_label(tok, (uint32_t)id, arena);
        if (alone && strcmp(alone, labels[id]) != 0)
            __builtin_trap();
    }
    arena_destroy(arena);
    token_ids_finish(&ids);
    tokenizer_destroy(tok);
    return 0;
}

// encode: GPT-2's tokenizer from the command line, for the comparison with the npm encoder.
//
//     encode DIR STRINGS   (STRINGS: texts separated by NUL bytes)
//
// Prints the ids of each text on a line of its own, separated by spaces.
#include <stdio.h>
#include <string.h>

#include "tokenizer.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        fputs("usage: encode DIR STRINGS\n", stderr);
        return STATUS_USAGE_ERROR;
    }
    Diag diag;
    diag_init(&diag);
    Tokenizer *tok = tokenizer_load(argv[1], &diag);
    FILE *f = tok ? fopen(argv[2], "rb") : NULL;
    if (!f) {
        if (tok)
            perror(argv[2]);
        else
            diag_print(&diag, stderr, false);
        tokenizer_destroy(tok);
        return STATUS_USAGE_ERROR;
    }
    StrBuf all;
    strbuf_init(&all);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        strbuf_append(&all, buf, n);
    fclose(f);
    int status = all.failed ? diag_out_of_memory(&diag) : STATUS_OK;
    TokenIds ids = {0};
    for (size_t start = 0; status == STATUS_OK && start < all.len;) {
        size_t len = strlen(all.data + start);
        if (tokenizer_utf8_end(all.data + start, len) != len) {
            fprintf(stderr, "text at byte %zu is not UTF-8\n", start);
            status = STATUS_USAGE_ERROR;
            break;
        }
        ids.n = 0;
        status = tokenizer_encode(tok, all.data + start, len, &ids, &diag);
        for (size_t k = 0; status == STATUS_OK && k < ids.n; k++)
            printf(k ? " %u" : "%u", ids.ids[k]);
        putchar('\n');
        start += len + 1;
    }
    if (diag.status)
        diag_print(&diag, stderr, false);
    token_ids_finish(&ids);
    strbuf_finish(&all);
    tokenizer_destroy(tok);
    return status;
}

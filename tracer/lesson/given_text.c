// given_text: owns the tokenizer of a text given, and turns the text into ids and labels.
#include "given_text.h"

#include <stdint.h>
#include <string.h>

#include "given_file.h"

bool given_text_open(GivenText *gt, const char *lesson_path, const char *folder, Diag *diag) {
    *gt = (GivenText){0};
    StrBuf dir;
    strbuf_init(&dir);
    // As a weight file's, the folder is found in the folder of --weights, else the lesson's.
    const char *slash = lesson_path ? strrchr(lesson_path, '/') : NULL;
    const char *weights = given_files_folder();
    if (folder[0] != '/' && weights) {
        strbuf_puts(&dir, weights);
        strbuf_puts(&dir, "/");
    } else if (folder[0] != '/' && slash) {
        strbuf_append(&dir, lesson_path, (size_t)(slash - lesson_path) + 1);
    }
    strbuf_puts(&dir, folder);
    if (dir.failed || !dir.data) {
        strbuf_finish(&dir);
        return diag_no_memory(diag);
    }
    gt->tokenizer = tokenizer_load(dir.data, diag);
    strbuf_finish(&dir);
    return gt->tokenizer != NULL;
}

bool given_text_encode(GivenText *gt, const char *text, size_t len, Arena *arena, size_t *bad,
                       Diag *diag) {
    *bad = tokenizer_utf8_end(text, len);
    if (*bad != len)
        return false;
    *bad = SIZE_MAX;
    TokenIds ids = {0};
    if (tokenizer_encode(gt->tokenizer, text, len, &ids, diag) != STATUS_OK) {
        token_ids_finish(&ids);  // the ids made before memory ran out
        return false;
    }
    double *values = arena_array(arena, ids.n ? ids.n : 1, sizeof(double));
    const char **labels = arena_array(arena, ids.n ? ids.n : 1, sizeof(char *));
    bool ok = values && labels;
    for (size_t i = 0; ok && i < ids.n; i++) {
        values[i] = ids.ids[i];  // ids are below 2^24: exact as doubles
        ok = (labels[i] = tokenizer_label(gt->tokenizer, ids.ids[i], arena)) != NULL;
    }
    if (ok) {
        gt->ids = values;
        gt->labels = labels;
        gt->n = ids.n;
    }
    token_ids_finish(&ids);
    return ok || diag_no_memory(diag);
}

void given_text_finish(GivenText *gt) {
    tokenizer_destroy(gt->tokenizer);
    *gt = (GivenText){0};
}

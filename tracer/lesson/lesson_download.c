// lesson_download: owns the download: key: its files checked for before the lesson is read.
#include "lesson_download.h"

#include <string.h>
#include <sys/stat.h>

#include "given_file.h"
#include "lesson_values.h"

static const char DOWNLOAD_HINT[] =
    "write download: {files: [config.json, model.safetensors], from: https://huggingface.co/gpt2}";

// The folder the lesson's files are read from, as the learner would type it.
static void folder_of(const Loader *L, StrBuf *out) {
    const char *weights = given_files_folder();
    const char *slash = strrchr(L->lesson->path, '/');
    if (weights)
        strbuf_puts(out, weights);
    else if (slash)
        strbuf_append(out, L->lesson->path, (size_t)(slash - L->lesson->path));
    else
        strbuf_puts(out, ".");
}

// Whether the file is there; *no_memory set when its path could not be made, so that memory
// running out is not taken for a file missing.
static bool is_file(const StrBuf *folder, const char *name, bool *no_memory) {
    StrBuf path;
    strbuf_init(&path);
    if (name[0] != '/')
        strbuf_printf(&path, "%s/", folder->data);
    strbuf_puts(&path, name);
    struct stat st;
    *no_memory = path.failed;
    bool ok = !path.failed && stat(path.data, &st) == 0 && S_ISREG(st.st_mode);
    strbuf_finish(&path);
    return ok;
}

// "a, b and c"
static void list_names(StrBuf *out, const char *const *names, size_t n) {
    for (size_t i = 0; i < n; i++)
        strbuf_printf(out, "%s%s", i == 0 ? "" : i + 1 == n ? " and " : ", ", names[i]);
}

bool lesson_check_download(Loader *L, const Node *node) {
    if (!node)
        return true;
    if (node->kind != NODE_MAPPING)
        return lesson_fail(L, node, DOWNLOAD_HINT, "download: must be a mapping with files: and from:, but this is %s",
                           lesson_describe(L, node));
    const Node *files = NULL, *from = NULL;
    for (size_t i = 0; i < node->n_pairs; i++) {
        const Node *key = node->pairs[i].key;
        if (strcmp(key->text, "files") == 0)
            files = node->pairs[i].value;
        else if (strcmp(key->text, "from") == 0)
            from = node->pairs[i].value;
        else
            return lesson_fail(L, key, "download: has two keys, files: and from:",
                               "unknown key '%s' under download:", key->text);
    }
    if (!files || !from)
        return lesson_fail(L, node, DOWNLOAD_HINT, "download: needs %s", files ? "from:" : "files:");
    if (from->kind != NODE_SCALAR || !from->text[0])
        return lesson_fail(L, from, DOWNLOAD_HINT, "from: must be where to download the files, but this is %s",
                           lesson_describe(L, from));
    // The address is printed in a hint the learner may copy: one https:// address, nothing
    // another scheme could run or a line break could add.
    if (strncmp(from->text, "https://", 8) != 0 || !from->text[8])
        return lesson_fail(L, from, DOWNLOAD_HINT, "from: must be an address that starts with https://, but this is %s",
                           lesson_describe(L, from));
    if (strpbrk(from->text, " \t\n\r\"'<>\\`"))
        return lesson_fail(L, from, DOWNLOAD_HINT,
                           "from: must be one address, without spaces, line breaks or quotes, but this is %s",
                           lesson_describe(L, from));
    if (files->kind == NODE_SEQUENCE && files->n_items == 0)
        return lesson_fail(L, files, DOWNLOAD_HINT, "files: is an empty list; it must name the files to download");
    if (files->kind != NODE_SEQUENCE)
        return lesson_fail(L, files, DOWNLOAD_HINT, "files: must be a list of file names, but this is %s",
                           lesson_describe(L, files));
    const char **names = arena_array(L->lesson->arena, files->n_items, sizeof(char *));
    const char **missing = arena_array(L->lesson->arena, files->n_items, sizeof(char *));
    if (!names || !missing)
        return diag_no_memory(L->diag);
    for (size_t i = 0; i < files->n_items; i++) {
        const Node *f = files->items[i];
        if (f->kind != NODE_SCALAR || !f->text[0])
            return lesson_fail(L, f, DOWNLOAD_HINT, "each of files: must be a file's name, but this is %s",
                               lesson_describe(L, f));
        names[i] = f->text;
    }
    StrBuf folder, text;
    strbuf_init(&folder);
    strbuf_init(&text);
    folder_of(L, &folder);
    size_t n_missing = 0;
    bool no_memory = false;
    for (size_t i = 0; !folder.failed && !no_memory && i < files->n_items; i++)
        if (!is_file(&folder, names[i], &no_memory) && !no_memory)
            missing[n_missing++] = names[i];
    if (n_missing && !no_memory) {
        list_names(&text, missing, n_missing);
        if (!folder.failed && !text.failed) {
            diag_error(L->diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0,
                       LESSON_DOWNLOAD_MISSING " '%s': %s", folder.data, text.data);
            strbuf_clear(&text);
            list_names(&text, names, files->n_items);
            if (!text.failed)
                diag_hint(L->diag, "download %s from %s into one folder, then run: tracer --weights FOLDER %s",
                          text.data, from->text, L->lesson->path);
        }
    }
    bool failed = folder.failed || text.failed || no_memory;
    strbuf_finish(&folder);
    strbuf_finish(&text);
    if (failed)
        return diag_no_memory(L->diag);
    return n_missing == 0;
}

bool lesson_download_missing(const Diag *diag) {
    return diag->status != STATUS_OK &&
           strncmp(diag->message, LESSON_DOWNLOAD_MISSING, strlen(LESSON_DOWNLOAD_MISSING)) == 0;
}

// save: every stage of a trace as a .npy file (numpy's format: float64, little-endian, C order)
// in a folder, and manifest.json listing them, so numpy.load reads any tensor exactly.
//
// Nothing half-written looks complete: each file is written whole or not at all (files_write),
// and the manifest, which says the folder is complete, is removed first and written last.
// Nothing is written when one of the files would replace a file the lesson reads, a link or
// anything but a regular file.
#define _DEFAULT_SOURCE  // S_ISDIR and mkdir's mode bits
#include "save.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "render.h"

// "DIR/NAME" into buf; false when it does not fit.
static bool join(char *buf, size_t cap, const char *dir, const char *name, const char *ext) {
    int n = snprintf(buf, cap, "%s/%s%s", dir, name, ext);
    return n > 0 && (size_t)n < cap;
}

// A path longer than an error message holds is shown by its end ('...' and the last
// SHOWN_TAIL bytes), so that the reason after it is never cut off.
enum { SHOWN_TAIL = 200 };

static int save_error(Diag *diag, const char *what, const char *path, int err) {
    size_t len = strlen(path);
    const char *cut = len > SHOWN_TAIL ? "..." : "";
    const char *tail = len > SHOWN_TAIL ? path + len - SHOWN_TAIL : path;
    diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "--save: cannot %s '%s%s': %s", what, cut, tail,
               files_error_text(err));
    if (err == FILES_IS_INPUT || err == FILES_IS_LINK)
        diag_hint(diag, "save into a folder of its own, such as --save trace/");
    return diag->status;
}

// The .npy header of a float64 C-order array of this shape, padded so the data starts at a
// multiple of 64 bytes (numpy's own alignment).
static size_t npy_header(char *buf, size_t cap, const Shape *shape) {
    char dims[128] = "";
    size_t used = 0;
    for (size_t i = 0; i < shape->rank; i++)
        used += (size_t)snprintf(dims + used, sizeof(dims) - used, "%s%zu", i ? ", " : "", shape->dim[i]);
    if (shape->rank == 1)
        snprintf(dims + used, sizeof(dims) - used, ",");
    char dict[256];
    int n = snprintf(dict, sizeof(dict), "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }", dims);
    size_t total = 10 + (size_t)n + 1;  // magic, version, length; the dict; its newline
    size_t padded = (total + 63) / 64 * 64;
    size_t header_len = padded - 10;
    ASSERT(padded <= cap);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (char)(header_len & 0xff);
    buf[9] = (char)(header_len >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', header_len - (size_t)n - 1);
    buf[padded - 1] = '\n';
    return padded;
}

// The values of t, little-endian whatever the host's byte order, in chunks (constant memory).
// One way on every host, so the path the tests run is the one every machine runs.
static bool write_values(FILE *f, const Tensor *t) {
    unsigned char chunk[8 * 1024];
    for (size_t i = 0; i < t->size;) {
        size_t n = 0;
        for (; n < sizeof(chunk) / 8 && i < t->size; n++, i++) {
            uint64_t bits;
            memcpy(&bits, &t->data[i], 8);
            for (int b = 0; b < 8; b++)
                chunk[n * 8 + (size_t)b] = (unsigned char)(bits >> (8 * b));
        }
        if (fwrite(chunk, 8, n, f) != n)
            return false;
    }
    return true;
}

static int write_whole(const char *path, FilesFill *fill, const void *what, Diag *diag) {
    int err = files_write(path, fill, what);
    return err ? save_error(diag, "write", path, err) : STATUS_OK;
}

static bool write_npy(FILE *f, const void *what) {
    const Tensor *t = what;
    char header[256];
    size_t n = npy_header(header, sizeof(header), &t->shape);
    return fwrite(header, 1, n, f) == n && write_values(f, t);
}

static bool write_text(FILE *f, const void *what) {
    const StrBuf *sb = what;
    return fwrite(strbuf_str(sb), 1, sb->len, f) == sb->len;
}

// The file of a stage, without .npy: its name (or its alias k, 1 to n_aliases: a block's
// result saved under the name results: gives it too), with a gradient's '/' written '.'
// (dloss/dW -> dloss.dW), since a file name cannot hold a '/'.
static void file_stem(const TraceStage *s, size_t k, char *buf, size_t cap) {
    snprintf(buf, cap, "%s", k ? s->aliases[k - 1] : s->name);
    for (char *p = buf; *p; p++)
        if (*p == '/')
            *p = '.';
}

// manifest.json: the lesson, then every stage in order with its shape and file (null for a
// shape-only tensor, which has no values to save).
static void manifest(const Trace *trace, StrBuf *out) {
    strbuf_puts(out, "{\"lesson\": ");
    render_json_string(out, trace->file);
    strbuf_puts(out, ", \"title\": ");
    render_json_string(out, trace->title);
    strbuf_puts(out, ", \"dtype\": \"<f8\", \"stages\": [\n");
    for (size_t i = 0; i < trace->n_stages; i++) {
        const TraceStage *s = &trace->stages[i];
        const Tensor *t = s->value;
        strbuf_puts(out, "  {\"name\": ");
        render_json_string(out, s->name);
        render_json_kind(out, s);
        strbuf_puts(out, ", \"shape\": [");
        for (size_t d = 0; d < t->shape.rank; d++)
            strbuf_printf(out, "%s%zu", d ? ", " : "", t->shape.dim[d]);
        strbuf_puts(out, "], \"file\": ");
        char stem[1024];
        file_stem(s, 0, stem, sizeof(stem));
        if (t->data)
            strbuf_printf(out, "\"%s.npy\"", stem);
        else
            strbuf_puts(out, "null");
        if (s->n_aliases && t->data) {  // the same values under each other name
            strbuf_puts(out, ", \"aliases\": {");
            for (size_t k = 1; k <= s->n_aliases; k++) {
                render_json_string(out, s->aliases[k - 1]);
                file_stem(s, k, stem, sizeof(stem));
                strbuf_printf(out, ": \"%s.npy\"%s", stem, k < s->n_aliases ? ", " : "}");
            }
        }
        strbuf_puts(out, i + 1 < trace->n_stages ? "},\n" : "}\n");
    }
    strbuf_puts(out, "]}\n");
}

int save_trace(const Trace *trace, const char *dir, Diag *diag) {
    struct stat st;
    ASSERT(dir[0] != '\0');  // the command line refuses --save with no folder
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "--save: '%s' is a file, not a folder", dir);
            diag_hint(diag, "name a folder for the .npy files; it is created when it does not exist");
            return diag->status;
        }
    } else if (errno != ENOENT || mkdir(dir, 0777) != 0) {
        return save_error(diag, "create the folder", dir, errno);
    }
    char path[4096], file[4096], stem[1024];
    if (!join(path, sizeof(path), dir, "manifest", ".json"))
        return save_error(diag, "write", dir, ENAMETOOLONG);
    // Every file is looked at before any is written, so that a save refused for one of them
    // has not replaced the others.
    for (size_t i = 0; i <= trace->n_stages; i++) {
        const TraceStage *s = i < trace->n_stages ? &trace->stages[i] : NULL;
        if (s && !s->value->data)
            continue;
        for (size_t k = 0; k <= (s ? s->n_aliases : 0); k++) {
            if (s)
                file_stem(s, k, stem, sizeof(stem));
            if (s && !join(file, sizeof(file), dir, stem, ".npy"))
                return save_error(diag, "write", k ? s->aliases[k - 1] : s->name, ENAMETOOLONG);
            int err = files_may_replace(s ? file : path);
            if (err)
                return save_error(diag, s ? "write" : "replace", s ? file : path, err);
        }
    }
    // The manifest says the folder is complete: gone until the new one is written.
    if (unlink(path) != 0 && errno != ENOENT)
        return save_error(diag, "replace", path, errno);
    for (size_t i = 0; i < trace->n_stages; i++) {
        const TraceStage *s = &trace->stages[i];
        ASSERT(!s->released);  // --save keeps every value (pipeline.c): none was freed
        if (!s->value->data)
            continue;
        for (size_t k = 0; k <= s->n_aliases; k++) {
            file_stem(s, k, stem, sizeof(stem));
            join(file, sizeof(file), dir, stem, ".npy");  // fits: it did above
            if (write_whole(file, write_npy, s->value, diag) != STATUS_OK)
                return diag->status;
        }
    }
    StrBuf text;
    strbuf_init(&text);
    manifest(trace, &text);
    if (text.failed) {
        strbuf_finish(&text);
        return diag_out_of_memory(diag);
    }
    int status = write_whole(path, write_text, &text, diag);
    strbuf_finish(&text);
    return status;
}

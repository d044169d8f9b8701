// given_file: owns finding a given's weight file, opening it once per lesson, and checking the
// tensor it names against the lesson (name, dtype, slice, shape, values a lesson can hold).
#include "given_file.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "diag.h"
#include "files.h"
#include "format.h"
#include "json.h"

typedef struct OpenFile {
    char *path;
    WeightFile *file;        // a .npy or .safetensors file, or ...
    Arena *arena;            // ... a .json file's values
    const JsonValue *json;
    bool failed;             // or neither: it could not be read, and a given said so
    bool layers_said;        // a given asked for a layer past its last, and was told so
} OpenFile;

struct GivenFiles {
    OpenFile *open;
    size_t n, cap;
};

static const char *folder_option;  // --weights DIR

void given_files_set_folder(const char *folder) {
    folder_option = folder;
}

const char *given_files_folder(void) {
    return folder_option;
}

GivenFiles *given_files_create(void) {
    return util_calloc(1, sizeof(GivenFiles));
}

void given_files_destroy(GivenFiles *files) {
    if (!files)
        return;
    for (size_t i = 0; i < files->n; i++) {
        util_free(files->open[i].path);
        weight_close(files->open[i].file);
        arena_destroy(files->open[i].arena);
    }
    util_free(files->open);
    util_free(files);
}

static bool fail(GivenFileProblem *p, const Node *at, int status, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static bool fail(GivenFileProblem *p, const Node *at, int status, const char *hint, const char *fmt, ...) {
    p->at = at;
    p->status = status;
    p->out_of_memory = false;
    p->reported = false;
    snprintf(p->hint, sizeof(p->hint), "%s", hint ? hint : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->message, sizeof(p->message), fmt, ap);
    va_end(ap);
    return false;
}

static bool no_memory(GivenFileProblem *p, const Node *at) {
    fail(p, at, STATUS_LESSON_ERROR, NULL, "out of memory");
    p->out_of_memory = true;
    return false;
}

// A file that could not be read is said so once, by the first given that names it: a broken
// model.safetensors would otherwise repeat its error for each of GPT-2's 148 tensors.
static bool failed_before(GivenFileProblem *p, const Node *at) {
    fail(p, at, STATUS_LESSON_ERROR, NULL, "the file could not be read (said above)");
    p->reported = true;
    return false;
}

// The slot of a file that could not be read, kept so that the next given naming it fails
// quietly (failed_before).
static void mark_failed(GivenFiles *files, OpenFile *slot) {
    arena_destroy(slot->arena);
    *slot = (OpenFile){.path = slot->path, .failed = true};
    files->n++;
}

static bool ends_with(const char *s, const char *end) {
    size_t n = strlen(s), m = strlen(end);
    return n >= m && strcmp(s + n - m, end) == 0;
}

// The file's path: as written when absolute, else in the folder of --weights or the lesson's.
static char *resolve(const char *lesson_path, const char *name) {
    if (name[0] == '/')
        return util_strdup(name);
    const char *folder = folder_option;
    size_t folder_len;
    if (folder) {
        folder_len = strlen(folder);
    } else {
        const char *slash = strrchr(lesson_path, '/');
        folder = lesson_path;
        folder_len = slash ? (size_t)(slash - lesson_path) + 1 : 0;
    }
    size_t n;
    char *path = NULL;
    if (util_add_size(folder_len, strlen(name), &n) && util_add_size(n, 2, &n) && (path = util_malloc(n)))
        snprintf(path, n, "%.*s%s%s", (int)folder_len, folder,
                 folder_len && folder[folder_len - 1] != '/' ? "/" : "", name);
    return path;
}

// The hint for a file that cannot be read for this reason (err as files_open_read's).
static const char *folder_hint(const char *name, int err) {
    if (files_not_regular(err))
        return FILES_NOT_REGULAR_HINT;
    if (name[0] == '/')
        return "the path starts with /, so it is read as written: check it";
    return folder_option ? "the files of a lesson are read from the folder --weights names"
                         : "a file's name is taken from the lesson's folder; --weights DIR reads "
                           "the lesson's files from DIR";
}

// The file's slot in the lesson's list: the one already open at that path, or a new, empty one
// (its path set) at the end, NULL when memory runs out.
static OpenFile *file_slot(GivenFiles *files, const GivenFileRequest *req, GivenFileProblem *p) {
    char *path = resolve(req->lesson_path, req->file->text);
    if (!path)
        return no_memory(p, req->file), NULL;
    for (size_t i = 0; i < files->n; i++)
        if (strcmp(files->open[i].path, path) == 0) {
            util_free(path);
            return &files->open[i];
        }
    if (files->n == files->cap) {
        size_t cap = files->cap ? files->cap * 2 : 4;
        OpenFile *grown = util_calloc(cap, sizeof(OpenFile));
        if (!grown) {
            util_free(path);
            return no_memory(p, req->file), NULL;
        }
        if (files->n)
            memcpy(grown, files->open, files->n * sizeof(OpenFile));
        util_free(files->open);
        files->open = grown;
        files->cap = cap;
    }
    files->open[files->n] = (OpenFile){.path = path};
    return &files->open[files->n];
}

// The open file at path, opened now if it was not yet.
static const WeightFile *open_file(GivenFiles *files, const GivenFileRequest *req, WeightFormat format,
                                   GivenFileProblem *p) {
    OpenFile *slot = file_slot(files, req, p);
    if (!slot || slot->file)
        return slot ? slot->file : NULL;
    if (slot->failed)
        return failed_before(p, req->file), NULL;
    char problem[WEIGHT_PROBLEM_MAX];
    int err;
    WeightFile *f = weight_open(slot->path, format, problem, sizeof(problem), &err);
    if (!f) {
        if (err == ENOMEM) {
            no_memory(p, req->file);
            util_free(slot->path);  // the slot stays free
            return NULL;
        }
        if (err)
            fail(p, req->file, STATUS_LESSON_ERROR, folder_hint(req->file->text, err), "cannot read '%s': %s",
                 slot->path, problem);
        else
            fail(p, req->file, STATUS_LESSON_ERROR,
                 format == WEIGHT_NPY ? "write it again with numpy.save"
                                      : "write it again with safetensors' save_file",
                 "'%s' is broken: %s", req->file->text, problem);
        mark_failed(files, slot);
        return NULL;
    }
    slot->file = f;
    files->n++;
    return f;
}

// A .json file's value, read whole and parsed once per lesson.
static const JsonValue *open_json(GivenFiles *files, const GivenFileRequest *req, GivenFileProblem *p) {
    OpenFile *slot = file_slot(files, req, p);
    if (!slot || slot->json)
        return slot ? slot->json : NULL;
    if (slot->failed)
        return failed_before(p, req->file), NULL;
    const JsonValue *root = NULL;
    char *bytes = NULL;
    size_t len;
    int err = files_read(slot->path, 0, GIVEN_JSON_MAX_BYTES, &bytes, &len);
    if (err == ENOMEM || (!err && !(slot->arena = arena_create()))) {
        no_memory(p, req->file);
        goto done;
    }
    if (err) {
        fail(p, req->file, STATUS_LESSON_ERROR, folder_hint(req->file->text, err), "cannot read '%s': %s", slot->path,
             files_error_text(err));
        goto done;
    }
    if (len > GIVEN_JSON_MAX_BYTES) {
        fail(p, req->file, STATUS_LESSON_ERROR, "a model's config.json is a few hundred bytes",
             "'%s' is larger than the %zu MiB a .json file of numbers may be", req->file->text,
             GIVEN_JSON_MAX_BYTES >> 20);
        goto done;
    }
    char problem[128];
    size_t at;
    root = json_parse(slot->arena, bytes, len, problem, sizeof(problem), &at);
    size_t line, col;
    if (!root && at == SIZE_MAX) {
        no_memory(p, req->file);
    } else if (!root && at == JSON_AT_TOO_MANY) {
        char most[32];
        format_count((double)JSON_MAX_VALUES, most, sizeof(most));
        fail(p, req->file, STATUS_LESSON_ERROR, "a model's config.json holds a few dozen numbers",
             "'%s' holds more than %s values, more than a .json file of numbers may", req->file->text, most);
    } else if (!root) {
        diag_place_of(bytes, len, at, &line, &col);
        fail(p, req->file, STATUS_LESSON_ERROR, "a .json file of numbers looks like {\"n_head\": 12}",
             "'%s' is not JSON: %s (at line %zu, column %zu)", req->file->text, problem, line, col);
    }
    else if (root->kind != JSON_OBJECT) {
        fail(p, req->file, STATUS_LESSON_ERROR, "a .json file of numbers looks like {\"n_head\": 12}",
             "'%s' holds %s, not an object of numbers", req->file->text, json_kind_name(root->kind));
        root = NULL;
    }
done:
    util_free(bytes);
    if (!root) {
        if (p->out_of_memory) {
            arena_destroy(slot->arena);
            util_free(slot->path);
            *slot = (OpenFile){0};
        } else {
            mark_failed(files, slot);
        }
        return NULL;
    }
    slot->json = root;
    files->n++;
    return root;
}

// The number a .json file holds under the given's name.
static bool json_number(GivenFiles *files, const GivenFileRequest *req, GivenFileTensor *out, GivenFileProblem *p) {
    const Node *extra = req->tensor ? req->tensor : req->slice;
    if (extra)
        return fail(p, extra, STATUS_LESSON_ERROR, "name the given as the file names the number, like n_head",
                    "a number of a .json file is taken by the given's name; %s does not go with it",
                    req->tensor ? "tensor:" : "slice:");
    const JsonValue *root = open_json(files, req, p);
    if (!root)
        return false;
    const JsonValue *v = json_get(root, req->name);
    if (!v || v->kind != JSON_NUMBER) {
        const char **names = util_calloc(root->n ? root->n : 1, sizeof(char *));
        if (!names)
            return no_memory(p, req->file);
        size_t n = 0;
        for (size_t i = 0; i < root->n; i++)
            if (root->items[i].kind == JSON_NUMBER)
                names[n++] = root->keys[i];
        const char *best = v ? NULL : diag_closest(req->name, names, n);
        char hint[WEIGHT_PROBLEM_MAX];
        if (best)
            snprintf(hint, sizeof(hint), "did you mean '%s'? A given takes the number under its own name", best);
        else
            snprintf(hint, sizeof(hint), "a given takes the number the file holds under its own name%s%s",
                     n ? ", like " : "", n ? names[0] : "");
        util_free(names);
        if (v)
            return fail(p, req->file, STATUS_LESSON_ERROR, hint, "'%s' holds %s under '%s', not a number",
                        req->file->text, json_kind_name(v->kind), req->name);
        return fail(p, req->file, STATUS_LESSON_ERROR, hint, "'%s' has no number '%s'", req->file->text, req->name);
    }
    if (v->whole && v->count > ((uint64_t)1 << 53))
        return fail(p, req->file, STATUS_LESSON_ERROR,
                    "a double holds every whole number up to 2^53 exactly, and no lesson needs larger",
                    "'%s' holds %s under '%s', beyond 2^53, which a double would round", req->file->text,
                    "a whole number", req->name);
    if (!isfinite(v->number))
        return fail(p, req->file, STATUS_LESSON_ERROR, "write the number within the range of a double",
                    "'%s' holds a number under '%s' too large for a double", req->file->text, req->name);
    *out = (GivenFileTensor){.number = v->number, .whole = v->whole, .shape = {.rank = 0}};
    if (req->want && !shape_equal(req->want, &out->shape)) {
        char want[64];
        shape_format(req->want, want, sizeof(want));
        return fail(p, req->shape, STATUS_LESSON_ERROR, "write shape: [], or leave shape: out",
                    "shape: says %s, but a number of a .json file is a single number, of shape []", want);
    }
    return true;
}

// The layer a tensor's name numbers, as Hugging Face names a model's layers ("h.11.ln_1.weight",
// "transformer.h.11.ln_1.weight": 11), with the length of the part before the number ("h." or
// "transformer.h."); false when the name numbers none.
static bool layer_of(const char *name, size_t *prefix_len, size_t *layer) {
    for (const char *p = name; (p = strchr(p, '.')) != NULL; p++) {
        const char *d = p + 1;
        size_t n = 0, v = 0;
        while (d[n] >= '0' && d[n] <= '9' && n < 9)
            v = 10 * v + (size_t)(d[n++] - '0');
        if (n && d[n] == '.') {
            *prefix_len = (size_t)(d - name);
            *layer = v;
            return true;
        }
    }
    return false;
}

// A tensor of a layer past the file's last: the lesson makes more layers than the model has
// (its config.json is another model's, or says another number). Said once for the file, at the
// first given that asks for such a layer; the givens after it fail quietly.
static bool past_the_layers(OpenFile *slot, const WeightFile *f, const GivenFileRequest *req, GivenFileProblem *p) {
    size_t want_prefix, want;
    if (!layer_of(req->tensor->text, &want_prefix, &want))
        return false;
    const char *strip = "transformer.";
    const char *want_name = req->tensor->text;
    if (strncmp(want_name, strip, strlen(strip)) == 0) {
        want_name += strlen(strip);
        want_prefix -= strlen(strip);
    }
    size_t last = 0;
    bool any = false;
    for (size_t i = 0; i < f->n_tensors; i++) {
        const char *name = f->tensors[i].name;
        if (strncmp(name, strip, strlen(strip)) == 0)
            name += strlen(strip);
        size_t prefix, layer;
        if (layer_of(name, &prefix, &layer) && prefix == want_prefix && strncmp(name, want_name, prefix) == 0) {
            last = any && last > layer ? last : layer;
            any = true;
        }
    }
    if (!any || want <= last)
        return false;
    if (slot->layers_said) {
        failed_before(p, req->tensor);
        return true;
    }
    slot->layers_said = true;
    const char *hint = "the lesson makes a copy of this given for each layer (times:): the number of layers it "
                       "reads, from config.json, must be the model's; take config.json and the weights from the "
                       "same model";
    if (last == 0)
        fail(p, req->tensor, STATUS_LESSON_ERROR, hint, "'%s' has no tensor '%s': its only layer is %.*s0",
             req->file->text, req->tensor->text, (int)want_prefix, want_name);
    else
        fail(p, req->tensor, STATUS_LESSON_ERROR, hint, "'%s' has no tensor '%s': its layers are %.*s0 to %.*s%zu, %zu "
             "of them", req->file->text, req->tensor->text, (int)want_prefix, want_name, (int)want_prefix, want_name,
             last, last + 1);
    return true;
}

static bool missing_tensor(const WeightFile *f, const GivenFileRequest *req, GivenFileProblem *p) {
    const char **names = util_calloc(f->n_tensors ? f->n_tensors : 1, sizeof(char *));
    if (!names)
        return no_memory(p, req->tensor);
    // Without the prefix in the lesson, the names are offered without it too (both are found).
    const char *prefix = "transformer.";
    bool strip = strncmp(req->tensor->text, prefix, strlen(prefix)) != 0;
    for (size_t i = 0; i < f->n_tensors; i++) {
        names[i] = f->tensors[i].name;
        if (strip && strncmp(names[i], prefix, strlen(prefix)) == 0)
            names[i] += strlen(prefix);
    }
    const char *best = diag_closest(req->tensor->text, names, f->n_tensors);
    char hint[WEIGHT_PROBLEM_MAX];
    if (best)
        snprintf(hint, sizeof(hint), "did you mean '%s'?", best);
    else if (f->n_tensors)
        snprintf(hint, sizeof(hint), "its tensors are named like '%s'", names[0]);
    else
        snprintf(hint, sizeof(hint), "the file holds no tensors");
    util_free(names);
    return fail(p, req->tensor, STATUS_LESSON_ERROR, hint, "'%s' has no tensor '%s'", req->file->text,
                req->tensor->text);
}

static void format_dims(const size_t *dim, size_t rank, char *buf, size_t cap) {
    size_t at = (size_t)snprintf(buf, cap, "[");
    for (size_t i = 0; i < rank && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%zu", i ? ", " : "", dim[i]);
    if (at < cap)
        snprintf(buf + at, cap - at, "]");
}

// The tensor of that name; Hugging Face saves GPT-2's tensors with or without the prefix
// "transformer." (GPT2LMHeadModel or GPT2Model), so a lesson's name finds either.
static const WeightTensor *weight_find_model(const WeightFile *f, const char *name) {
    static const char prefix[] = "transformer.";
    const size_t n = sizeof(prefix) - 1;
    const WeightTensor *t = weight_find(f, name);
    if (t)
        return t;
    if (strncmp(name, prefix, n) == 0)
        return weight_find(f, name + n);
    char with[WEIGHT_PROBLEM_MAX];
    if ((size_t)snprintf(with, sizeof(with), "%s%s", prefix, name) >= sizeof(with))
        return NULL;
    return weight_find(f, with);
}

// The tensor the request names: the only one of an .npy file, or tensor: of a .safetensors.
static const WeightTensor *find_tensor(OpenFile *slot, const WeightFile *f, const GivenFileRequest *req,
                                       GivenFileProblem *p) {
    if (f->format == WEIGHT_NPY) {
        if (req->tensor)
            return fail(p, req->tensor, STATUS_LESSON_ERROR, "remove tensor:",
                        "an .npy file holds one tensor, so tensor: names nothing"), NULL;
        return &f->tensors[0];
    }
    if (!req->tensor)
        return fail(p, req->file, STATUS_LESSON_ERROR,
                    f->n_tensors ? "add tensor: with the name of one of its tensors" : "the file holds no tensors",
                    "'%s' holds %zu tensors; say which with tensor:", req->file->text, f->n_tensors), NULL;
    if (req->tensor->kind != NODE_SCALAR)
        return fail(p, req->tensor, STATUS_LESSON_ERROR, "write tensor: wte.weight",
                    "tensor: must be the name of a tensor in the file, but this is %s",
                    yamldoc_kind_name(req->tensor->kind)), NULL;
    const WeightTensor *t = weight_find_model(f, req->tensor->text);
    if (!t) {
        if (!past_the_layers(slot, f, req, p))
            missing_tensor(f, req, p);
        return NULL;
    }
    return t;
}

// The part of the tensor slice: takes: on each axis it names, begin .. end - 1 of that axis.
static bool take_slice(const WeightTensor *t, const GivenFileRequest *req, GivenFileTensor *out, const char *dims,
                       GivenFileProblem *p) {
    if (t->rank == 0)
        return fail(p, req->slice, STATUS_LESSON_ERROR, "remove slice:",
                    "slice: takes rows, but the tensor in '%s' is a single number", req->file->text);
    if (req->n_slice > t->rank)
        return fail(p, req->slice_at[t->rank], STATUS_LESSON_ERROR,
                    "slice: has one part for each of the first axes: [a, b], or all for the whole axis",
                    "slice: names %zu axes, but the tensor in '%s' has %zu (shape %s)", req->n_slice,
                    req->file->text, t->rank, dims);
    for (size_t i = 0; i < req->n_slice; i++) {
        if (req->slice_whole[i])
            continue;
        size_t begin = req->slice_begin[i], end = req->slice_end[i];
        if (begin >= end || end > t->dim[i]) {
            if (req->slice_at[i] == req->slice)  // slice: [a, b], the first axis
                return fail(p, req->slice, STATUS_LESSON_ERROR,
                            "slice: [a, b] takes rows a to b - 1 of the first axis, like Python's a:b",
                            "slice: [%zu, %zu] is not within the %zu rows of the tensor of shape %s", begin, end,
                            t->dim[0], dims);
            return fail(p, req->slice_at[i], STATUS_LESSON_ERROR,
                        "[a, b] takes a to b - 1 of its axis, like Python's a:b; all takes the whole axis",
                        "slice: [%zu, %zu] of axis %zu is not within its %zu values (the tensor has shape %s)", begin,
                        end, i, t->dim[i], dims);
        }
        out->shape.dim[i] = end - begin;
        out->begin[i] = begin;
    }
    return true;
}

// What the tensor's values are as a given: its rank and sizes, the slice taken.
static bool take(const WeightTensor *t, const GivenFileRequest *req, GivenFileTensor *out, GivenFileProblem *p) {
    const Node *at = req->tensor ? req->tensor : req->file;
    char dims[160];
    format_dims(t->dim, t->rank, dims, sizeof(dims));
    if (t->dtype == WEIGHT_UNSUPPORTED)
        return fail(p, at, STATUS_LESSON_ERROR,
                    "the tracer reads F64, F32, F16, BF16, I64 and I32 (in .npy: f8, f4, f2, i8 "
                    "and i4); convert the tensor to one of them",
                    "'%s' stores its values as %s, which the tracer does not read", req->file->text,
                    t->dtype_name);
    if (t->rank > TENSOR_MAX_RANK)
        return fail(p, at, STATUS_LESSON_ERROR, "take a tensor of at most 4 axes",
                    "'%s' has a tensor of shape %s; a tensor of a lesson has at most %d axes",
                    req->file->text, dims, TENSOR_MAX_RANK);
    for (size_t i = 0; i < t->rank; i++)
        if (t->dim[i] == 0)
            return fail(p, at, STATUS_LESSON_ERROR, "take a tensor with values",
                        "'%s' has a tensor of shape %s, without values", req->file->text, dims);
    out->shape = (Shape){.rank = t->rank};
    for (size_t i = 0; i < t->rank; i++)
        out->shape.dim[i] = t->dim[i];
    for (size_t i = 0; i < TENSOR_MAX_RANK; i++)
        out->begin[i] = 0;
    if (req->slice && !take_slice(t, req, out, dims, p))
        return false;
    if (req->want && !shape_equal(req->want, &out->shape)) {
        char want[64], have[64], hint[128];
        shape_format(req->want, want, sizeof(want));
        shape_format(&out->shape, have, sizeof(have));
        snprintf(hint, sizeof(hint), "write shape: %s, or check that the lesson names the right tensor", have);
        return fail(p, req->shape, STATUS_LESSON_ERROR, hint, "shape: says %s, but the file's %s is %s",
                    want, req->slice ? "slice" : "tensor", have);
    }
    size_t size;
    if (!shape_size(&out->shape, &size) || size > TENSOR_MAX_VALUES)
        return fail(p, at, STATUS_LESSON_ERROR, "take fewer rows with slice: [a, b]",
                    "the tensor of shape %s has more values than a tensor of the tracer holds (%zu)", dims,
                    (size_t)TENSOR_MAX_VALUES);
    return true;
}

// The values a given takes lie in runs along the tensor's last axis: run r of the given's
// shape starts at this value of the tensor (C order).
static size_t run_start(const GivenFileTensor *g, size_t r) {
    const size_t rank = g->shape.rank;
    if (rank == 0)
        return 0;
    size_t at = 0, stride = 1;
    for (size_t i = rank; i-- > 0;) {
        size_t idx = g->begin[i];
        if (i + 1 < rank) {
            idx += r % g->shape.dim[i];
            r /= g->shape.dim[i];
        }
        at += idx * stride;
        stride *= g->tensor->dim[i];
    }
    return at;
}

static size_t run_length(const GivenFileTensor *g) {
    return g->shape.rank ? g->shape.dim[g->shape.rank - 1] : 1;
}

// The values taken read one run after another, runs that follow each other in the tensor (a
// whole tensor, or a slice of its first axis) with one call: widened into out when it is set,
// else the first unfit one found (*unfit, SIZE_MAX when there is none). 0, or why they could
// not be read.
static int read_runs(const GivenFileTensor *g, double *out, size_t *unfit) {
    size_t size, len = run_length(g);
    shape_size(&g->shape, &size);
    size_t runs = size / len;
    for (size_t r = 0; r < runs;) {
        size_t start = run_start(g, r), k = 1;
        while (r + k < runs && run_start(g, r + k) == start + k * len)
            k++;
        int err = out ? weight_widen(g->file, g->tensor, start, k * len, out + r * len)
                      : weight_find_unfit(g->file, g->tensor, start, k * len, unfit);
        if (err || (!out && *unfit != SIZE_MAX))
            return err;
        r += k;
    }
    return 0;
}

// A file that can no longer be read: most likely another program is writing it.
static bool read_failed(const GivenFileTensor *g, int err, GivenFileProblem *p) {
    return fail(p, g->file_node, STATUS_USAGE_ERROR,
                "another program may be writing the file (numpy.save, a download): wait until it is done, "
                "then run the lesson again",
                "cannot read '%s': %s", g->file_node->text, files_error_text(err));
}

bool given_file_widen(const GivenFileTensor *g, double *out, GivenFileProblem *p) {
    int err = read_runs(g, out, NULL);
    return err ? read_failed(g, err, p) : true;
}

int given_file_report(const GivenFileProblem *p, const Source *src, Diag *diag) {
    if (p->out_of_memory)
        return diag_out_of_memory(diag);
    if (p->reported && diag->status != STATUS_OK)
        return diag->status;
    if (diag_error(diag, p->status, src, p->at->line, p->at->col, yamldoc_node_width(p->at), "%s", p->message) ==
            p->status &&
        p->hint[0])
        diag_hint(diag, "%s", p->hint);
    return diag->status;
}

bool given_file_load(GivenFiles *files, const GivenFileRequest *req, GivenFileTensor *out,
                     GivenFileProblem *p) {
    const Node *file = req->file;
    if (file->kind != NODE_SCALAR || !file->text[0])
        return fail(p, file, STATUS_LESSON_ERROR, "write file: Q.npy or file: model.safetensors",
                    "file: must name a .npy or .safetensors file, but this is %s",
                    file->kind == NODE_SCALAR ? "empty" : yamldoc_kind_name(file->kind));
    WeightFormat format;
    if (ends_with(file->text, ".json"))
        return json_number(files, req, out, p);
    if (ends_with(file->text, ".npy"))
        format = WEIGHT_NPY;
    else if (ends_with(file->text, ".safetensors"))
        format = WEIGHT_SAFETENSORS;
    else
        return fail(p, file, STATUS_LESSON_ERROR,
                    "the tracer reads tensors from NumPy's .npy files and .safetensors files, and "
                    "numbers from .json files",
                    "'%s' is neither a .npy, a .safetensors nor a .json file", file->text);
    const WeightFile *f = open_file(files, req, format, p);
    OpenFile *slot = f ? file_slot(files, req, p) : NULL;  // found: f is open in it
    const WeightTensor *t = slot ? find_tensor(slot, f, req, p) : NULL;
    if (!t || !take(t, req, out, p))
        return false;
    out->file = f;
    out->file_node = file;
    out->tensor = t;
    size_t bad;
    int err = read_runs(out, NULL, &bad);
    if (err)
        return read_failed(out, err, p);
    if (bad != SIZE_MAX) {
        size_t idx[WEIGHT_MAX_RANK], rest = bad;
        for (size_t i = t->rank; i-- > 0;) {
            idx[i] = rest % t->dim[i];
            rest /= t->dim[i];
        }
        char where[160];
        format_dims(idx, t->rank, where, sizeof(where));
        bool nan = t->dtype != WEIGHT_I64;
        return fail(p, req->tensor ? req->tensor : file, STATUS_LESSON_ERROR,
                    nan ? "a lesson's numbers are real numbers or infinities; compute a NaN (0/0) in a step to show one"
                        : "a double holds every whole number up to 2^53 exactly, and no lesson needs larger",
                    "value %s of the tensor in '%s' is %s", where, file->text,
                    nan ? "not a number (NaN)" : "a whole number beyond 2^53, which a double would round");
    }
    return true;
}

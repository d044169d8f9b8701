// weightfile: owns the .npy and .safetensors formats: their headers checked against the
// file's length, the values read from the file a block at a time, and each widened to double.
#include "weightfile.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "format.h"
#include "json.h"

static bool fail(char *problem, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(char *problem, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problem, cap, fmt, ap);
    va_end(ap);
    return false;
}

size_t weight_dtype_size(WeightDtype dtype) {
    static const size_t sizes[] = {8, 4, 2, 2, 8, 4, 0};
    _Static_assert(ARRAY_LEN(sizes) == WEIGHT_UNSUPPORTED + 1, "one size per dtype");
    return sizes[dtype];
}

// The tensor's count from its dims, and its bytes; false when they overflow.
static bool tensor_bytes(WeightTensor *t, size_t *bytes) {
    t->count = 1;
    for (size_t i = 0; i < t->rank; i++)
        if (!util_mul_size(t->count, t->dim[i], &t->count))
            return false;
    return util_mul_size(t->count, weight_dtype_size(t->dtype), bytes);
}

// ---------------------------------------------------------------- .npy

// An .npy header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
typedef struct NpyHeader {
    const char *text;
    size_t len, at;
} NpyHeader;

static void npy_space(NpyHeader *h) {
    while (h->at < h->len && (h->text[h->at] == ' ' || h->text[h->at] == '\n'))
        h->at++;
}

static bool npy_char(NpyHeader *h, char c) {
    npy_space(h);
    if (h->at < h->len && h->text[h->at] == c) {
        h->at++;
        return true;
    }
    return false;
}

// A quoted Python string without escapes; false when there is none here.
static bool npy_string(NpyHeader *h, const char **s, size_t *n) {
    npy_space(h);
    if (h->at >= h->len || (h->text[h->at] != '\'' && h->text[h->at] != '"'))
        return false;
    char quote = h->text[h->at++];
    size_t start = h->at;
    while (h->at < h->len && h->text[h->at] != quote && h->text[h->at] != '\\')
        h->at++;
    if (h->at >= h->len || h->text[h->at] != quote)
        return false;
    *s = h->text + start;
    *n = h->at++ - start;
    return true;
}

static bool npy_word(NpyHeader *h, const char *word) {
    npy_space(h);
    size_t n = strlen(word);
    if (h->len - h->at < n || memcmp(h->text + h->at, word, n) != 0)
        return false;
    h->at += n;
    return true;
}

static bool npy_shape(NpyHeader *h, WeightTensor *t, char *problem, size_t cap) {
    if (!npy_char(h, '('))
        return fail(problem, cap, "its header's shape is not a tuple of sizes");
    t->rank = 0;
    for (;;) {
        if (npy_char(h, ')'))
            return true;
        npy_space(h);
        if (h->at >= h->len || h->text[h->at] < '0' || h->text[h->at] > '9')
            return fail(problem, cap, "its header's shape is not a tuple of sizes");
        if (t->rank == WEIGHT_MAX_RANK)
            return fail(problem, cap, "it has more than %d axes", WEIGHT_MAX_RANK);
        size_t d = 0;
        while (h->at < h->len && h->text[h->at] >= '0' && h->text[h->at] <= '9') {
            size_t digit = (size_t)(h->text[h->at++] - '0');
            if (!util_mul_size(d, 10, &d) || !util_add_size(d, digit, &d))
                return fail(problem, cap, "its header's shape has a size too large to count");
        }
        t->dim[t->rank++] = d;
        if (!npy_char(h, ',') && !(npy_space(h), h->at < h->len && h->text[h->at] == ')'))
            return fail(problem, cap, "its header's shape is not a tuple of sizes");
    }
}

static bool npy_descr(WeightTensor *t, const char *s, size_t n, Arena *arena, char *problem, size_t cap) {
    static const struct {
        const char *code;
        WeightDtype dtype;
    } codes[] = {{"f8", WEIGHT_F64}, {"f4", WEIGHT_F32}, {"f2", WEIGHT_F16},
                 {"i8", WEIGHT_I64}, {"i4", WEIGHT_I32}};
    t->dtype_name = arena_strndup(arena, s, n);
    if (!t->dtype_name)
        return fail(problem, cap, "out of memory");
    t->dtype = WEIGHT_UNSUPPORTED;
    if (n == 3 && (s[0] == '<' || s[0] == '>' || s[0] == '=' || s[0] == '|')) {
        for (size_t i = 0; i < ARRAY_LEN(codes); i++)
            if (memcmp(s + 1, codes[i].code, 2) == 0)
                t->dtype = codes[i].dtype;
        // '=' is the writer's own order; every machine the tracer is built for is little-endian
        t->big_endian = s[0] == '>';
    }
    return true;
}

static bool npy_dict(NpyHeader *h, WeightTensor *t, Arena *arena, char *problem, size_t cap) {
    bool have_descr = false, have_order = false, have_shape = false;
    if (!npy_char(h, '{'))
        return fail(problem, cap, "its header is not a Python dict");
    while (!npy_char(h, '}')) {
        const char *key, *s;
        size_t key_len, n;
        if (!npy_string(h, &key, &key_len) || !npy_char(h, ':'))
            return fail(problem, cap, "its header is not a Python dict");
        if (key_len == 5 && memcmp(key, "descr", 5) == 0) {
            if (!npy_string(h, &s, &n))
                return fail(problem, cap, "its values are records (a structured dtype); the tracer "
                                          "reads one number per value");
            if (!npy_descr(t, s, n, arena, problem, cap))
                return false;
            have_descr = true;
        } else if (key_len == 13 && memcmp(key, "fortran_order", 13) == 0) {
            if (npy_word(h, "True"))
                t->fortran = true;
            else if (npy_word(h, "False"))
                t->fortran = false;
            else
                return fail(problem, cap, "its header's fortran_order is neither True nor False");
            have_order = true;
        } else if (key_len == 5 && memcmp(key, "shape", 5) == 0) {
            if (!npy_shape(h, t, problem, cap))
                return false;
            have_shape = true;
        } else {
            return fail(problem, cap, "its header has a key '%.*s' that .npy files do not have",
                        (int)(key_len < 40 ? key_len : 40), key);
        }
        if (!npy_char(h, ',') && !(npy_space(h), h->at < h->len && h->text[h->at] == '}'))
            return fail(problem, cap, "its header is not a Python dict");
    }
    if (!have_descr || !have_order || !have_shape)
        return fail(problem, cap, "its header lacks %s", !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    npy_space(h);
    if (h->at != h->len)
        return fail(problem, cap, "text follows its header's dict");
    return true;
}

static bool parse_npy(WeightFile *f, char *problem, size_t cap) {
    static const unsigned char magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    const unsigned char *b = f->bytes;
    if (f->len < 10 || memcmp(b, magic, sizeof(magic)) != 0)
        return fail(problem, cap, "it is not an .npy file (it does not start with \\x93NUMPY)");
    unsigned major = b[6];
    size_t header_len, start;
    if (major == 1) {
        header_len = (size_t)b[8] | (size_t)b[9] << 8;
        start = 10;
    } else if (major == 2 || major == 3) {
        if (f->len < 12)
            return fail(problem, cap, "it ends inside its header");
        header_len = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        start = 12;
    } else {
        return fail(problem, cap, "it is an .npy file of version %u, which the tracer does not read", major);
    }
    if (header_len > WEIGHT_MAX_HEADER)
        return fail(problem, cap, "its header is %zu bytes, more than the %zu the tracer reads", header_len,
                    WEIGHT_MAX_HEADER);
    if (header_len > f->len - start)
        return fail(problem, cap, "it ends inside its header");
    WeightTensor *t = arena_alloc(f->arena, sizeof(WeightTensor));
    if (!t)
        return fail(problem, cap, "out of memory");
    t->name = "";
    NpyHeader h = {.text = (const char *)b + start, .len = header_len};
    if (!npy_dict(&h, t, f->arena, problem, cap))
        return false;
    size_t bytes;
    if (!tensor_bytes(t, &bytes))
        return fail(problem, cap, "its shape has more values than a 64-bit count can hold");
    t->begin = start + header_len;
    if (t->dtype != WEIGHT_UNSUPPORTED && bytes != f->len - t->begin)
        return fail(problem, cap, "its shape and dtype need %zu bytes of values, but the file has %zu%s",
                    bytes, f->len - t->begin, bytes > f->len - t->begin ? " (is it cut short?)" : "");
    t->end = t->dtype != WEIGHT_UNSUPPORTED ? f->len : t->begin;
    f->tensors = t;
    f->n_tensors = 1;
    return true;
}

// ---------------------------------------------------------------- .safetensors

static bool safetensors_dtype(WeightTensor *t, const char *name) {
    static const struct {
        const char *name;
        WeightDtype dtype;
    } names[] = {{"F64", WEIGHT_F64}, {"F32", WEIGHT_F32}, {"F16", WEIGHT_F16},
                 {"BF16", WEIGHT_BF16}, {"I64", WEIGHT_I64}, {"I32", WEIGHT_I32}};
    t->dtype_name = name;
    t->dtype = WEIGHT_UNSUPPORTED;
    for (size_t i = 0; i < ARRAY_LEN(names); i++)
        if (strcmp(name, names[i].name) == 0)
            t->dtype = names[i].dtype;
    return t->dtype != WEIGHT_UNSUPPORTED;
}

static bool safetensors_entry(WeightTensor *t, const char *name, const JsonValue *v, size_t data_len,
                              char *problem, size_t cap) {
    const JsonValue *dtype = json_get(v, "dtype"), *shape = json_get(v, "shape"),
                    *offsets = json_get(v, "data_offsets");
    t->name = name;
    if (v->kind != JSON_OBJECT || !dtype || dtype->kind != JSON_STRING || !shape ||
        shape->kind != JSON_ARRAY || !offsets || offsets->kind != JSON_ARRAY)
        return fail(problem, cap, "its header's entry for '%.60s' is not {\"dtype\": ..., \"shape\": [...], "
                                  "\"data_offsets\": [begin, end]}", name);
    if (shape->n > WEIGHT_MAX_RANK)
        return fail(problem, cap, "tensor '%.60s' has more than %d axes", name, WEIGHT_MAX_RANK);
    t->rank = shape->n;
    for (size_t i = 0; i < shape->n; i++) {
        if (shape->items[i].kind != JSON_NUMBER || !shape->items[i].whole)
            return fail(problem, cap, "tensor '%.60s' has a shape that is not a list of sizes", name);
        t->dim[i] = (size_t)shape->items[i].count;
    }
    if (offsets->n != 2)
        return fail(problem, cap, "tensor '%.60s' has data_offsets that are not [begin, end]", name);
    for (size_t i = 0; i < 2; i++)
        if (offsets->items[i].kind != JSON_NUMBER || !offsets->items[i].whole)
            return fail(problem, cap, "tensor '%.60s' has data_offsets that are not [begin, end]", name);
    uint64_t begin = offsets->items[0].count, end = offsets->items[1].count;
    if (begin > end)
        return fail(problem, cap, "tensor '%.60s' has data_offsets that end before they begin", name);
    if (end > data_len)
        return fail(problem, cap, "tensor '%.60s' has data_offsets that run past the end of the file "
                                  "(%llu bytes of values, %zu in the file; is it cut short?)",
                    name, (unsigned long long)end, data_len);
    bool known = safetensors_dtype(t, dtype->text);
    size_t bytes;
    if (!tensor_bytes(t, &bytes))
        return fail(problem, cap, "tensor '%.60s' has more values than a 64-bit count can hold", name);
    if (known && bytes != end - begin)
        return fail(problem, cap, "tensor '%.60s' is %s with %zu values (%zu bytes), but its "
                                  "data_offsets hold %llu bytes", name, dtype->text, t->count, bytes,
                    (unsigned long long)(end - begin));
    t->begin = (size_t)begin;
    t->end = (size_t)end;
    return true;
}

static int by_begin(const void *a, const void *b) {
    const WeightTensor *x = *(WeightTensor *const *)a, *y = *(WeightTensor *const *)b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : x->end < y->end ? -1 : x->end > y->end;
}

static int by_name(const void *a, const void *b) {
    return strcmp((*(WeightTensor *const *)a)->name, (*(WeightTensor *const *)b)->name);
}

// No two tensors share a name or a byte; sorted copies find both in n log n.
static bool safetensors_disjoint(WeightFile *f, char *problem, size_t cap) {
    if (f->n_tensors < 2)
        return true;
    WeightTensor **sorted = util_calloc(f->n_tensors, sizeof(WeightTensor *));
    if (!sorted)
        return fail(problem, cap, "out of memory");
    for (size_t i = 0; i < f->n_tensors; i++)
        sorted[i] = &f->tensors[i];
    bool ok = true;
    qsort(sorted, f->n_tensors, sizeof(*sorted), by_name);
    for (size_t i = 1; ok && i < f->n_tensors; i++)
        if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0)
            ok = fail(problem, cap, "its header names tensor '%.60s' twice", sorted[i]->name);
    qsort(sorted, f->n_tensors, sizeof(*sorted), by_begin);
    const WeightTensor *reach = NULL;  // of the tensors so far, the one that ends last
    for (size_t i = 0; ok && i < f->n_tensors; i++) {
        if (sorted[i]->begin == sorted[i]->end)
            continue;  // no values, no bytes to share
        if (reach && sorted[i]->begin < reach->end)
            ok = fail(problem, cap, "tensors '%.60s' and '%.60s' overlap in the file", reach->name,
                      sorted[i]->name);
        if (!reach || sorted[i]->end > reach->end)
            reach = sorted[i];
    }
    util_free(sorted);
    return ok;
}

static bool parse_safetensors(WeightFile *f, char *problem, size_t cap) {
    const unsigned char *b = f->bytes;
    if (f->len < 8)
        return fail(problem, cap, "it is too short for a .safetensors file (%zu bytes)", f->len);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | b[i];
    if (n > WEIGHT_MAX_HEADER)
        return fail(problem, cap, "its first 8 bytes give a header of %llu bytes, more than the %zu a "
                                  ".safetensors file may have", (unsigned long long)n, WEIGHT_MAX_HEADER);
    if (n > f->len - 8)
        return fail(problem, cap, "its header is %llu bytes, but the file ends after %zu (is it cut short?)",
                    (unsigned long long)n, f->len - 8);
    char json_problem[128];
    size_t at;
    const JsonValue *root = json_parse(f->arena, (const char *)b + 8, (size_t)n, json_problem,
                                       sizeof(json_problem), &at);
    if (!root && at == SIZE_MAX)
        return fail(problem, cap, "out of memory");
    if (!root && at == JSON_AT_TOO_MANY) {
        char most[32];
        format_count((double)JSON_MAX_VALUES, most, sizeof(most));
        return fail(problem, cap, "its header holds more than %s values (names, sizes and offsets), more than "
                                  "the tracer reads: a model's file holds a few thousand", most);
    }
    if (!root)
        return fail(problem, cap, "its header is not JSON: %s (at byte %zu of the file)", json_problem, at + 8);
    if (root->kind != JSON_OBJECT)
        return fail(problem, cap, "its header is %s, not an object of tensors", json_kind_name(root->kind));
    f->tensors = arena_array(f->arena, root->n ? root->n : 1, sizeof(WeightTensor));
    if (!f->tensors)
        return fail(problem, cap, "out of memory");
    size_t data_start = 8 + (size_t)n, data_len = f->len - data_start;
    for (size_t i = 0; i < root->n; i++) {
        if (strcmp(root->keys[i], "__metadata__") == 0)
            continue;
        WeightTensor *t = &f->tensors[f->n_tensors];
        if (!safetensors_entry(t, root->keys[i], &root->items[i], data_len, problem, cap))
            return false;
        t->begin += data_start;
        t->end += data_start;
        f->n_tensors++;
    }
    return safetensors_disjoint(f, problem, cap);
}

// ---------------------------------------------------------------- files

bool weight_parse(WeightFile *f, WeightFormat format, const unsigned char *bytes, size_t len,
                  char *problem, size_t cap) {
    f->format = format;
    f->bytes = bytes;
    f->len = len;
    f->fd = -1;
    f->tensors = NULL;
    f->n_tensors = 0;
    return format == WEIGHT_NPY ? parse_npy(f, problem, cap) : parse_safetensors(f, problem, cap);
}

// Bytes [at, at + n) of the file into buf: 0, or an errno value, or FILES_CUT_SHORT when the
// file now ends before them.
static int read_at(int fd, unsigned char *buf, size_t n, size_t at) {
    while (n) {
        ssize_t got = pread(fd, buf, n, (off_t)at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return errno;
        if (got == 0)
            return FILES_CUT_SHORT;
        buf += got, at += (size_t)got, n -= (size_t)got;
    }
    return 0;
}

// How many of the file's first bytes the parsers read: its header, or less when the file is
// too short for it, or the header is too long to be read (which they then refuse). The first
// `have` bytes (at least 12, or the whole file) are in b.
static size_t header_bytes(WeightFormat format, const unsigned char *b, size_t have, size_t len) {
    uint64_t n = 0;
    size_t start = 8;
    if (format == WEIGHT_NPY) {
        if (have < 12 || memcmp(b, "\x93NUMPY", 6) != 0)
            return have;
        n = b[6] == 1 ? (size_t)b[8] | (size_t)b[9] << 8 : (uint64_t)b[8] | (uint64_t)b[9] << 8 | (uint64_t)b[10] << 16 | (uint64_t)b[11] << 24;
        start = b[6] == 1 ? 10 : 12;
    } else {
        if (have < 8)
            return have;
        for (int i = 7; i >= 0; i--)
            n = n << 8 | b[i];
    }
    return n > WEIGHT_MAX_HEADER || n > len - start ? have : start + (size_t)n;
}

WeightFile *weight_open(const char *path, WeightFormat format, char *problem, size_t cap, int *err) {
    *err = 0;
    WeightFile *f = util_calloc(1, sizeof(WeightFile));
    if (!f || !(f->arena = arena_create())) {
        util_free(f);
        fail(problem, cap, "out of memory");
        *err = ENOMEM;
        return NULL;
    }
    f->fd = files_open_read(path, 0, err);
    unsigned char *head = NULL;
    struct stat st;
    if (f->fd < 0 || fstat(f->fd, &st) != 0) {
        *err = f->fd < 0 ? *err : errno;
        goto failed;
    }
    // Only the header is read now: the values are read when they are widened.
    size_t len = (size_t)st.st_size, have = len < 12 ? len : 12;
    unsigned char first[12];
    if ((*err = read_at(f->fd, first, have, 0)) != 0)
        goto failed;
    size_t need = header_bytes(format, first, have, len);
    head = util_malloc(need ? need : 1);
    if (!head) {
        *err = ENOMEM;
        goto failed;
    }
    if ((*err = read_at(f->fd, head, need, 0)) != 0)
        goto failed;
    int fd = f->fd;
    bool parsed = weight_parse(f, format, head, len, problem, cap);
    f->fd = fd;
    f->bytes = NULL;  // the header's names and dtypes are the arena's; head goes
    if (!parsed) {
        if (strcmp(problem, "out of memory") == 0)
            *err = ENOMEM;
        goto failed;
    }
    util_free(head);
    return f;
failed:
    if (*err)
        fail(problem, cap, "%s", files_error_text(*err));
    util_free(head);
    weight_close(f);
    return NULL;
}

void weight_close(WeightFile *f) {
    if (!f)
        return;
    if (f->fd >= 0)
        close(f->fd);
    arena_destroy(f->arena);
    util_free(f);
}

const WeightTensor *weight_find(const WeightFile *f, const char *name) {
    for (size_t i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0)
            return &f->tensors[i];
    return NULL;
}

// ---------------------------------------------------------------- values

// The bits of a value of `size` bytes at p, in the file's byte order.
static uint64_t load_bits(const unsigned char *p, size_t size, bool big_endian) {
    uint64_t bits = 0;
    for (size_t i = 0; i < size; i++)
        bits |= (uint64_t)p[big_endian ? size - 1 - i : i] << (8 * i);
    return bits;
}

// IEEE half precision: 1 sign bit, 5 exponent bits (bias 15), 10 fraction bits. Every half is
// a double: ldexp of a whole number of at most 11 bits is exact.
static double widen_f16(uint64_t bits) {
    double sign = bits & 0x8000 ? -1.0 : 1.0;
    unsigned exponent = (unsigned)(bits >> 10) & 0x1F, fraction = (unsigned)bits & 0x3FF;
    if (exponent == 0x1F)
        return fraction ? NAN : sign * INFINITY;
    if (exponent == 0)  // zero or subnormal: fraction * 2^-24
        return sign * ldexp(fraction, -24);
    return sign * ldexp(fraction | 0x400, (int)exponent - 25);
}

static double widen_f32(uint32_t bits) {
    float x;
    memcpy(&x, &bits, sizeof(x));
    return x;  // float to double is exact
}

static double widen_bits(WeightDtype dtype, uint64_t bits) {
    switch (dtype) {
    case WEIGHT_F64: {
        double x;
        memcpy(&x, &bits, sizeof(x));
        return x;
    }
    case WEIGHT_F32:
        return widen_f32((uint32_t)bits);
    case WEIGHT_F16:
        return widen_f16(bits);
    case WEIGHT_BF16:  // the upper half of a float
        return widen_f32((uint32_t)bits << 16);
    case WEIGHT_I64:
        return (double)(int64_t)bits;
    case WEIGHT_I32:
        return (double)(int32_t)(uint32_t)bits;
    case WEIGHT_UNSUPPORTED:
        break;
    }
    ASSERT(!"a dtype the tracer reads");
    return 0;
}

// The place in C order (the last axis fastest) of the value stored at `stored` in a
// Fortran-order file, which keeps the first axis fastest.
static size_t c_order_index(const WeightTensor *t, size_t stored) {
    size_t idx[WEIGHT_MAX_RANK];
    for (size_t i = 0; i < t->rank; i++) {
        idx[i] = stored % t->dim[i];
        stored /= t->dim[i];
    }
    size_t at = 0;
    for (size_t i = 0; i < t->rank; i++)
        at = at * t->dim[i] + idx[i];
    return at;
}

// The bytes of a tensor's values, as they are needed: the caller's, or read from the file a
// block at a time into buf.
typedef struct Reading {
    const WeightFile *f;
    const WeightTensor *t;
    unsigned char *buf;  // WEIGHT_READ_BLOCK bytes
    int err;             // why the last read failed
} Reading;

// Bytes [at, at + n) of the file (n at most WEIGHT_READ_BLOCK, within the tensor); NULL with
// r->err set when they could not be read.
static const unsigned char *bytes_at(Reading *r, size_t at, size_t n) {
    ASSERT(n <= WEIGHT_READ_BLOCK && at >= r->t->begin && at + n <= r->t->end);
    if (r->f->bytes)
        return r->f->bytes + at;
    return (r->err = read_at(r->f->fd, r->buf, n, at)) == 0 ? r->buf : NULL;
}

static const WeightReader *installed_reader;

void weight_install_reader(const WeightReader *reader) {
    installed_reader = reader;
}

// Whether a value of these bits is one a lesson cannot hold.
static bool unfit(const WeightTensor *t, uint64_t bits) {
    const double exact = 9007199254740992.0;  // 2^53: every whole number up to it is a double
    if (t->dtype == WEIGHT_I64) {
        int64_t v = (int64_t)bits;
        return v > (int64_t)exact || v < -(int64_t)exact;
    }
    return isnan(widen_bits(t->dtype, bits));
}

// k values stored one after the other at p, the first of them value `at` in C order: widened
// into out[0, k) when out is set, else the first that is unfit put in *found (unless one
// earlier in C order is there already).
static void take_run(const WeightTensor *t, const unsigned char *p, size_t k, double *out, size_t at, size_t *found) {
    size_t size = weight_dtype_size(t->dtype), fast_found;
    if (installed_reader && (out ? installed_reader->widen(t, p, k, out)
                                 : installed_reader->find_unfit(t, p, k, &fast_found))) {
        if (!out && fast_found != SIZE_MAX && at + fast_found < *found)
            *found = at + fast_found;
        return;
    }
    for (size_t j = 0; j < k; j++) {
        uint64_t bits = load_bits(p + j * size, size, t->big_endian);
        if (out) {
            out[j] = widen_bits(t->dtype, bits);
        } else if (unfit(t, bits)) {
            if (at + j < *found)
                *found = at + j;
            return;
        }
    }
}

// Values first .. first + n - 1 of t (in C order) widened into out when out is set, else the
// first of them that is unfit put in *found. A file in C order is read from value `first` on,
// a block at a time; a Fortran-order file, whose values in C order lie apart, is read whole in
// the order it is stored, each value put in its place.
static int read_values(const WeightFile *f, const WeightTensor *t, size_t first, size_t n, double *out,
                       size_t *found) {
    unsigned char buf[WEIGHT_READ_BLOCK];
    Reading r = {.f = f, .t = t, .buf = buf};
    size_t size = weight_dtype_size(t->dtype), per_block = WEIGHT_READ_BLOCK / size;
    ASSERT(size && first <= t->count && n <= t->count - first);
    size_t none = SIZE_MAX, *first_unfit = found ? found : &none;
    *first_unfit = SIZE_MAX;
    if (n == 0)
        return 0;
    bool in_order = !t->fortran || t->rank < 2;
    size_t from = in_order ? first : 0, to = in_order ? first + n : t->count;
    for (size_t i = from; i < to && (out || *first_unfit == SIZE_MAX || !in_order);) {
        size_t k = to - i < per_block ? to - i : per_block;
        const unsigned char *p = bytes_at(&r, t->begin + i * size, k * size);
        if (!p)
            return r.err;
        if (in_order) {
            take_run(t, p, k, out ? out + (i - first) : NULL, i, first_unfit);
        } else {
            for (size_t j = 0; j < k; j++) {
                size_t at = c_order_index(t, i + j);
                if (at >= first && at - first < n)
                    take_run(t, p + j * size, 1, out ? out + (at - first) : NULL, at, first_unfit);
            }
        }
        i += k;
    }
    return 0;
}

int weight_widen(const WeightFile *f, const WeightTensor *t, size_t first, size_t n, double *out) {
    return read_values(f, t, first, n, out, NULL);
}

int weight_find_unfit(const WeightFile *f, const WeightTensor *t, size_t first, size_t n, size_t *at) {
    return read_values(f, t, first, n, NULL, at);
}

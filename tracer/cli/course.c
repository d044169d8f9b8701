// course: the course folder, its lessons in order, and short names resolved to lesson files.
#define _XOPEN_SOURCE 700  // realpath
#include "course.h"

#include "config.h"
#include "lesson.h"
#include "safetext.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// The most lessons an ambiguous name lists by name before "and N more".
#define COURSE_MAX_NAMED 6

typedef struct CourseLesson {
    char *file;         // the lesson's path: ROOT/lessons/02_the_cat_sat.yaml
    char *stem;         // "02_the_cat_sat"
    const char *name;   // "the_cat_sat" (inside stem); the whole stem when it has no number
    size_t number_len;  // the digits that open stem ("02"); 0 when it has none
} CourseLesson;

typedef struct Course {
    char *lessons_dir;
    CourseLesson *lessons;  // sorted by stem: the course order
    size_t n, cap;
} Course;

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

static bool is_directory(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

// The course folder: TRACER_COURSE when set; else share/tracer beside the running binary
// (an install unpacked elsewhere, or staged with meson install --destdir); else the folder
// it was installed to. NULL when memory runs out.
static char *course_root(void) {
    const char *env = getenv(COURSE_ENV);
    if (env && env[0])
        return util_strdup(env);
    char exe[4096];
    ssize_t n = TRACER_COURSE_FROM_BINDIR[0] ? readlink("/proc/self/exe", exe, sizeof(exe) - 1) : -1;
    char *slash = n > 0 && (size_t)n < sizeof(exe) - 1 ? (exe[n] = '\0', strrchr(exe, '/')) : NULL;
    if (slash) {
        *slash = '\0';
        StrBuf sb;
        strbuf_init(&sb);
        strbuf_printf(&sb, "%s/%s/lessons", exe, TRACER_COURSE_FROM_BINDIR);
        // Name the folder without the ".." of the way there, as it reads in messages.
        char *real = sb.failed ? NULL : realpath(sb.data, NULL);
        strbuf_finish(&sb);
        if (real && is_directory(real)) {
            real[strlen(real) - strlen("/lessons")] = '\0';
            char *root = util_strdup(real);
            free(real);  // realpath's own allocation
            return root;
        }
        free(real);
    }
    return util_strdup(TRACER_COURSE_DIR);
}

static int compare_lessons(const void *a, const void *b) {
    return strcmp(((const CourseLesson *)a)->stem, ((const CourseLesson *)b)->stem);
}

static void course_finish(Course *c) {
    for (size_t i = 0; i < c->n; i++) {
        util_free(c->lessons[i].file);
        util_free(c->lessons[i].stem);
    }
    util_free(c->lessons);
    util_free(c->lessons_dir);
    memset(c, 0, sizeof(*c));
}

static bool add_lesson(Course *c, const char *file_name) {
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 32;
        CourseLesson *more = util_calloc(cap, sizeof(CourseLesson));
        if (!more)
            return false;
        if (c->n)
            memcpy(more, c->lessons, c->n * sizeof(CourseLesson));
        util_free(c->lessons);
        c->lessons = more;
        c->cap = cap;
    }
    CourseLesson *l = &c->lessons[c->n];
    size_t stem_len = strlen(file_name) - (ends_with(file_name, ".yaml") ? 5 : 4);
    StrBuf file;
    strbuf_init(&file);
    strbuf_printf(&file, "%s/%s", c->lessons_dir, file_name);
    l->stem = util_malloc(stem_len + 1);
    if (file.failed || !l->stem) {
        strbuf_finish(&file);
        util_free(l->stem);
        l->stem = NULL;
        return false;
    }
    l->file = file.data;
    memcpy(l->stem, file_name, stem_len);
    l->stem[stem_len] = '\0';
    size_t digits = strspn(l->stem, "0123456789");
    l->number_len = digits > 0 && l->stem[digits] == '_' && l->stem[digits + 1] ? digits : 0;
    l->name = l->number_len ? l->stem + digits + 1 : l->stem;
    c->n++;
    return true;
}

// Read the lessons folder. When it cannot be read, the message says so; for a lesson looked
// up by name (arg), it also says that no file has that name.
static int course_open(Course *c, const char *arg, Diag *diag) {
    memset(c, 0, sizeof(*c));
    char *root = course_root();
    StrBuf dir;
    strbuf_init(&dir);
    if (root)
        strbuf_printf(&dir, "%s/lessons", root);
    util_free(root);
    if (!root || dir.failed) {
        strbuf_finish(&dir);
        return diag_out_of_memory(diag);
    }
    c->lessons_dir = dir.data;
    DIR *d = opendir(c->lessons_dir);
    if (!d) {
        const char *why = strerror(errno);
        if (arg)
            diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0,
                       "there is no file called '%s', and no course to look it up in: cannot read '%s': %s", arg,
                       c->lessons_dir, why);
        else
            diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "cannot read the course folder '%s': %s",
                       c->lessons_dir, why);
        diag_hint(diag, "%s set %s to a folder that holds lessons/",
                  arg ? "give the path of a lesson file, or" : "install the tracer (meson install), or", COURSE_ENV);
        return STATUS_USAGE_ERROR;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.' || !(ends_with(e->d_name, ".yaml") || ends_with(e->d_name, ".yml")))
            continue;
        if (!add_lesson(c, e->d_name)) {
            diag_out_of_memory(diag);
            break;
        }
    }
    closedir(d);
    if (c->n)
        qsort(c->lessons, c->n, sizeof(CourseLesson), compare_lessons);
    return diag->status;
}

// Lessons that `arg` could mean, most exact first: by number, then by whole name, then by a
// part of the name. Fills hits (capacity c->n) and returns how many there are.
static size_t find_lessons(const Course *c, const char *arg, const CourseLesson **hits) {
    size_t n = 0;
    size_t digits = strspn(arg, "0123456789");
    if (arg[digits] == '\0') {
        // "2" and "02" both mean lesson 02: compare the numbers without their leading zeros.
        const char *want = arg + strspn(arg, "0");
        for (size_t i = 0; i < c->n; i++) {
            const CourseLesson *l = &c->lessons[i];
            const char *have = l->stem + strspn(l->stem, "0");
            size_t have_len = l->number_len - (size_t)(have - l->stem);
            if (l->number_len && have_len == strlen(want) && strncmp(have, want, have_len) == 0)
                hits[n++] = l;
        }
        return n;
    }
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->lessons[i].stem, arg) == 0 || strcmp(c->lessons[i].name, arg) == 0)
            hits[n++] = &c->lessons[i];
    if (n)
        return n;
    for (size_t i = 0; i < c->n; i++)
        if (strstr(c->lessons[i].stem, arg))
            hits[n++] = &c->lessons[i];
    return n;
}

static void not_found(const Course *c, const char *arg, Diag *diag) {
    const char *list_hint = "tracer --list shows every lesson with its title";
    if (arg[strspn(arg, "0123456789")] == '\0') {
        const CourseLesson *first = NULL, *last = NULL;
        for (size_t i = 0; i < c->n; i++)
            if (c->lessons[i].number_len) {
                first = first ? first : &c->lessons[i];
                last = &c->lessons[i];
            }
        if (first)
            diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0,
                       "there is no lesson %s: the course's lessons are numbered %.*s to %.*s", arg,
                       (int)first->number_len, first->stem, (int)last->number_len, last->stem);
        else
            diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "there is no lesson %s: the course's lessons have no numbers",
                       arg);
        diag_hint(diag, "%s", list_hint);
        return;
    }
    diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "there is no lesson or file called '%s'", arg);
    const char **names = util_calloc(c->n ? c->n : 1, sizeof(char *));
    for (size_t i = 0; names && i < c->n; i++)
        names[i] = c->lessons[i].name;
    const char *closest = names ? diag_closest(arg, names, c->n) : NULL;
    if (closest)
        diag_hint(diag, "did you mean '%s'? (%s)", closest, list_hint);
    else
        diag_hint(diag, "%s; a lesson file is given by its path, like lessons/02_the_cat_sat.yaml", list_hint);
    util_free(names);
}

static void ambiguous(const char *arg, const CourseLesson *const *hits, size_t n, Diag *diag) {
    char list[512] = "";
    size_t len = 0;
    size_t named = n > COURSE_MAX_NAMED ? COURSE_MAX_NAMED : n;
    for (size_t i = 0; i < named && len < sizeof(list); i++) {
        const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
        len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", sep, hits[i]->stem);
    }
    if (named < n && len < sizeof(list))
        snprintf(list + len, sizeof(list) - len, " and %zu more", n - named);
    diag_error(diag, STATUS_USAGE_ERROR, NULL, 0, 0, 0, "'%s' could mean %s", arg, list);
    if (hits[0]->number_len)
        diag_hint(diag, "give more of the name, or the lesson's number, as in: tracer %.*s",
                  (int)hits[0]->number_len, hits[0]->stem);
    else
        diag_hint(diag, "give more of the name, as in: tracer %s", hits[0]->stem);
}

int course_lesson_path(const char *arg, char **path, Diag *diag) {
    *path = NULL;
    struct stat st;
    // "" and "-" (standard input, to other programs) are not names either: say they cannot be read.
    if (arg[0] == '\0' || strcmp(arg, "-") == 0 || strchr(arg, '/') || ends_with(arg, ".yaml") ||
        ends_with(arg, ".yml") || stat(arg, &st) == 0) {
        *path = util_strdup(arg);
        return *path ? STATUS_OK : diag_out_of_memory(diag);
    }
    Course c;
    if (course_open(&c, arg, diag) != STATUS_OK) {
        course_finish(&c);
        return diag->status;
    }
    const CourseLesson **hits = util_calloc(c.n ? c.n : 1, sizeof(CourseLesson *));
    if (!hits) {
        course_finish(&c);
        return diag_out_of_memory(diag);
    }
    size_t n = find_lessons(&c, arg, hits);
    if (n == 1) {
        *path = util_strdup(hits[0]->file);
        if (!*path)
            diag_out_of_memory(diag);
    } else if (n == 0) {
        not_found(&c, arg, diag);
    } else {
        ambiguous(arg, hits, n, diag);
    }
    util_free(hits);
    course_finish(&c);
    return *path ? STATUS_OK : diag->status;
}

// The title on one line: a block scalar's line breaks and tabs become spaces.
static void put_title(StrBuf *out, const char *title) {
    size_t len = strlen(title);
    while (len && (unsigned char)title[len - 1] <= ' ')
        len--;
    for (size_t i = 0; i < len; i++)
        strbuf_putc(out, (unsigned char)title[i] < ' ' ? ' ' : title[i]);
}

int course_list(StrBuf *out, Diag *diag) {
    Course c;
    if (course_open(&c, NULL, diag) != STATUS_OK) {
        course_finish(&c);
        return diag->status;
    }
    size_t number_width = 0, name_width = 0;
    for (size_t i = 0; i < c.n; i++) {
        size_t name_len = strlen(c.lessons[i].name);
        number_width = c.lessons[i].number_len > number_width ? c.lessons[i].number_len : number_width;
        name_width = name_len > name_width ? name_len : name_width;
    }
    for (size_t i = 0; i < c.n; i++) {
        const CourseLesson *l = &c.lessons[i];
        // A file's name may hold anything but '/' and NUL: shown through the filter of every
        // text from a file (safetext.h).
        strbuf_printf(out, "%-*.*s  ", (int)number_width, (int)l->number_len, l->stem);
        safetext_escape(out, l->name, strlen(l->name), false);
        strbuf_repeat(out, " ", name_width - strlen(l->name) + 2);
        // The title is the lesson's own, read without the rest of the lesson (a lesson that
        // reads a model's files is listed without them); a lesson whose title cannot be read
        // says why instead.
        Diag lesson_diag;
        diag_init(&lesson_diag);
        Lesson *lesson = lesson_load_title(l->file, &lesson_diag);
        if (lesson_diag.out_of_memory) {  // the lesson is not to blame: the list cannot be made
            course_finish(&c);
            return diag_out_of_memory(diag);
        }
        if (lesson) {
            put_title(out, lesson->title);
        } else {
            strbuf_puts(out, "(broken: ");
            if (lesson_diag.line)
                strbuf_printf(out, "line %zu: ", lesson_diag.line);
            safetext_escape(out, lesson_diag.message, strlen(lesson_diag.message), false);
            strbuf_putc(out, ')');
        }
        lesson_destroy(lesson);
        strbuf_putc(out, '\n');
    }
    if (!c.n)
        strbuf_printf(out, "(no lessons in %s)\n", c.lessons_dir);
    course_finish(&c);
    return out->failed ? diag_out_of_memory(diag) : STATUS_OK;
}

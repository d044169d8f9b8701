// course: where the lessons of an installed tracer live, and which lesson a short name means.
// A course is a folder holding lessons/NN_name.yaml and golden/NN_name.txt: the installed
// one (share/tracer), or the folder TRACER_COURSE names (a checkout, or a teacher's own).
//
//     Diag diag; diag_init(&diag);
//     char *path = NULL;
//     if (course_lesson_path("02", &path, &diag) != STATUS_OK)   // or "the_cat_sat", or a file
//         ... diag_print(&diag, stderr, false) ...
//     ... pipeline_run_file(path, ...) ...
//     util_free(path);
#pragma once

#include "diag.h"
#include "util.h"

// The environment variable that points the tracer at another course folder.
#define COURSE_ENV "TRACER_COURSE"

// The file an argument means: a file that exists, or any argument that looks like a path
// (holds '/' or ends in .yaml or .yml, or is "" or "-"), is itself; anything else is looked up in the course by
// number ("02", "2"), by name ("the_cat_sat", "02_the_cat_sat") or by a part of its name that
// only one lesson has ("cat"). *path is the caller's to util_free. A name that no lesson
// has, or that several lessons share, is a usage error (status 2) saying which.
int course_lesson_path(const char *arg, char **path, Diag *diag);

// One line per lesson of the course, in order: number, name and title.
//     01  softmax_weights  Softmax weights: how much "The" attends to each token
int course_list(StrBuf *out, Diag *diag);

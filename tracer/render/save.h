// save: a trace written as files, one .npy per stage (float64, little-endian, C order) plus
// manifest.json naming each stage's shape and file, for numpy and other tools:
//
//     save_trace(trace, "out", &diag);   // out/Q.npy, out/weights.1.npy, ..., out/manifest.json
//     >>> numpy.load("out/Q.npy")        # exactly the tracer's doubles
//
// The folder is created when missing. Files are written under a temporary name and renamed
// when complete; manifest.json is removed first and written last, so a folder with a manifest
// is complete. Errors (a file where the folder should be, a folder that cannot be written, a
// full disk) are usage errors (status 2).
#pragma once

#include "diag.h"
#include "trace.h"

int save_trace(const Trace *trace, const char *dir, Diag *diag);

// lesson_outline: the names of a lesson's givens and steps as its YAML writes them, without
// loading it: for --list of a lesson whose downloaded files are not there, whose sizes (and so
// shapes, layers, intermediate stages) come from those files.
//
//     name         what it is
//     ln_1_g{i}    given, from model.safetensors, {i} from 1 to n_layer
//     layer{i}.h   layernorm(x, ln_1_g, ln_1_b)
//     last         = layer{n_layer}.out
//
// A block applied with times: shows its steps once, {i} standing for the application's number;
// a block inside a block, under both names; a name results: gives the lesson's later steps,
// after "=" the stage it names. Anything not written as the loader reads it is
// passed over: the loader, with the files, says what is wrong.
#pragma once

#include <stdbool.h>

#include "util.h"
#include "yamldoc.h"

// The lines above into out, the names in a column as wide as the longest; false when memory
// ran out.
bool lesson_outline(const YamlDoc *doc, StrBuf *out);

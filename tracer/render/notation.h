// notation: the one notation a tensor's values print in (format_style), chosen from all of its
// values, which are read in blocks on the threads of the loops (backend.h): a tensor of the
// GPT-2 block's attention holds 12 million values, and a trace prints dozens of them. The
// choice is format_style's, to the bit, on any number of threads.
//
//     FormatStyle st = notation_of(t, 4);   // as format_style(t->data, t->size, 4, t->is_count)
#pragma once

#include "format.h"
#include "tensor.h"

FormatStyle notation_of(const Tensor *t, int digits);

// widen: the fast layer's reader of weight files (weightfile.h's WeightReader): float32 runs
// widened and scanned for NaNs a run at a time, with the reference's results.
#pragma once

#include "weightfile.h"

void widen_install(void);

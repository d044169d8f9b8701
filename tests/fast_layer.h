// The fast layer, when the build has it (-Dfast=true): a test or benchmark of the whole tracer
// runs what the tracer program runs. In the reference build (-Dfast=false) this does nothing.
#pragma once

#include "config.h"

#if TRACER_FAST
#include "fast.h"
#endif

static inline void test_install_fast_layer(void) {
#if TRACER_FAST
    fast_install();
#endif
}

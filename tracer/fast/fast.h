// fast: the tracer's fast layer, installed behind the kernel's seam (backend.h). The
// reference tracer computes everything with plain loops on one thread; this layer replaces
// them where a lesson at GPT-2 scale needs it, and every replacement gives the same bits:
//
//     gemm.c      the matrix product, packed into panels and computed in AVX-512, AVX2 or
//                 portable vector tiles (tested bit for bit against the reference loop)
//     parallel.c  the kernels' loops split among threads (--threads)
//     pool.c      small allocations from one region of huge pages, not a page fault each
//
//     int main(void) { fast_install(); ... }   // before the first lesson runs
#pragma once

// Replace the reference's product, loops and small allocations with the fast layer's; before
// the first allocation.
void fast_install(void);

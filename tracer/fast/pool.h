// pool: small blocks (up to 256 KiB) for util's allocation wrapper, from one region the
// kernel is asked to back with 2 MiB huge pages; larger ones, and all of them under
// AddressSanitizer, still come from the C library.
//
//     pool_install();   // before the first allocation (fast_install does it)
#pragma once

// Serve util_malloc's small blocks from the pool from now on.
void pool_install(void);

// format: numbers as the trace prints them, the same on every platform.
//
//     char buf[64];
//     format_fixed(-0.0, 4, buf, sizeof buf);   // "0.0000" (never "-0.0000")
//     format_fixed(0.0 / 0.0, 4, buf, sizeof buf);  // "nan" (never "-nan")
//     format_count(124439808, buf, sizeof buf);  // "124,439,808" (but 1024 stays "1024")
//     format_exact(0.1, buf, sizeof buf);        // "0.10000000000000001": reads back the same
#pragma once

#include <stddef.h>

void format_fixed(double v, int digits, char *buf, size_t cap);
void format_count(double v, char *buf, size_t cap);
// 17 significant digits, so the text reads back to the same double; "inf", "-inf", "nan".
void format_exact(double v, char *buf, size_t cap);
// The shortest of %.{1..17}g that reads back to the same double: 0.1 -> "0.1"; a whole
// number below 1e15 in plain digits: 10000 -> "10000".
void format_short(double v, char *buf, size_t cap);

// Columns a terminal gives len bytes of UTF-8 text: East Asian wide characters (猫) take two,
// combining accents none, everything else one. ANSI colour escapes take none. The same on
// every machine (no locale), so golden files do not depend on where they were made.
size_t format_display_width(const char *s, size_t len);
// A size in bytes in the largest binary unit that keeps it at least 1: "1 GiB", "74.5 GiB",
// "512 bytes".
void format_bytes(double bytes, char *buf, size_t cap);

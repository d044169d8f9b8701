// safetext: the one filter that every byte from a file, a download: or a lesson passes before
// it reaches a terminal. A terminal acts on control characters (ESC starts a sequence that can
// clear the screen or set the window's title, BEL rings), and bidirectional overrides and
// isolates show the text around them in another order than it is stored; bytes that are not
// UTF-8 show as anything at all. The loader refuses such characters in a lesson (with a
// located error); text read from other files is shown with each of them as a visible escape.
//
//     safetext_escape(&out, name, strlen(name), false);   // "w\x1B[2J" for w ESC [ 2 J
//     char shown[256];
//     printf("'%s'\n", safetext_show(shown, sizeof(shown), name));
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

typedef enum SafetextKind {
    SAFETEXT_PLAIN,    // shown as it is (a tab and a line feed too: the caller decides)
    SAFETEXT_CONTROL,  // U+0000 to U+001F but tab and line feed, U+007F, U+0080 to U+009F
    SAFETEXT_BIDI,     // U+202A to U+202E, U+2066 to U+2069: embeddings, overrides, isolates
    SAFETEXT_INVALID,  // a byte that does not begin whole, shortest UTF-8
} SafetextKind;

// The character at s[0, len) (len > 0): its length in bytes (1 for a byte that is not UTF-8),
// its code point (the byte itself for one that is not UTF-8) and its kind.
size_t safetext_next(const char *s, size_t len, uint32_t *code, SafetextKind *kind);
// The offset of the first character of s[0, len) that is not plain (len when every one is),
// with its code point and kind.
size_t safetext_find(const char *s, size_t len, uint32_t *code, SafetextKind *kind);

// Append s[0, len) with every character that is not plain written as an escape: \xNN for each
// byte of a control character or of bytes that are not UTF-8 (\x1B, \xC2\x85, \xFF), \uNNNN
// for an override or an isolate (\u202E), and a line feed, a tab and a return as \n, \t, \r;
// a backslash as \x5C too when escape_backslash (so that an escape is told from the text).
void safetext_escape(StrBuf *out, const char *s, size_t len, bool escape_backslash);
// Whether safetext_escape would write s[0, len) as it is.
bool safetext_unchanged(const char *s, size_t len, bool escape_backslash);
// s escaped the same (a backslash as itself) into buf, at most cap bytes with its NUL; cut
// after a whole character, with "...", when it does not fit. Returns buf.
const char *safetext_show(char *buf, size_t cap, const char *s);

// The name of an invisible character that formats text but shows nothing (U+200B ZERO WIDTH
// SPACE, U+00AD SOFT HYPHEN, U+FEFF ...); NULL for any other.
const char *safetext_invisible_name(uint32_t code);
// The offset of the first such invisible character of s (len when there is none), its code.
size_t safetext_find_invisible(const char *s, size_t len, uint32_t *code);

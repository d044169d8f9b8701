// verdict: the words that judge a stage against the document, written once for every
// renderer. Each judgement comes back as a tone, a head (the verdict itself: "document:
// agrees") and a body (the numbers and why); the renderer colours the head by its tone and
// writes names through its own function (plain text, or escaped HTML code).
//
//     VerdictWords w;
//     verdict_words(&w, trace, stage, &stage->document->chained, false, plain_name);
//     printf("%s%s%s\n", strbuf_str(&w.head), w.sep, strbuf_str(&w.body));
//     verdict_words_finish(&w);
#pragma once

#include <stdbool.h>

#include "trace.h"
#include "util.h"

typedef enum VerdictTone {
    VERDICT_AGREES,     // green
    VERDICT_INHERITS,   // yellow: off only through numbers carried from earlier steps
    VERDICT_DISAGREES,  // red: the document's own slip
    VERDICT_EDIT,       // the student's change, and what follows from it
} VerdictTone;

typedef struct VerdictWords {
    VerdictTone tone;
    StrBuf head;      // "document: agrees"
    const char *sep;  // what joins head and body in running text: ": ", " " or ", "
    StrBuf body;      // "every printed number is ...", without a full stop
} VerdictWords;

// Writes a stage's or a given's name (with its index, as "Q_0[1, 0]") into a sentence.
typedef void (*VerdictName)(StrBuf *out, const char *name);

// One verdict on a stage's document: the chained one (the exact value against the printed
// one) or, local, the same operation on the document's own printed inputs.
void verdict_words(VerdictWords *w, const Trace *tr, const TraceStage *s, const DocVerdict *v, bool local,
                   VerdictName name);
// A given the student changed (DOC_EDITED): where, and both numbers.
void verdict_edited(VerdictWords *w, const TraceStage *s, VerdictName name);
// A stage the document printed in another shape (DOC_SET_ASIDE): not compared.
void verdict_set_aside(VerdictWords *w, const TraceStage *s, VerdictName name);
// A given whose values are exactly the ones the document printed.
void verdict_same(VerdictWords *w);
// Whether either buffer ran out of memory.
bool verdict_words_failed(const VerdictWords *w);
void verdict_words_finish(VerdictWords *w);

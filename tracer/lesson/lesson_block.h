// lesson_block: blocks: steps written once, with inputs in and named results out, and their
// applications (`- use: layer`), each loaded as the block's steps under names of their own:
//
//     blocks:
//       layer:
//         inputs: [x, W]
//         results: [y]
//         steps:
//           - h: x @ W
//           - y: x + relu(h)
//     steps:
//       - use: layer
//         times: 2            # layer1.h, layer1.y, layer2.h, layer2.y
//         inputs: {x: X, W: W}
//         carry: {x: y}       # layer2's x is layer1's y
//         results: {out: y}   # out is layer2.y
//       - use: layer
//         as: zeroed
//         inputs: {x: X, W: W}
//         replace: {h: 0}     # zeroed.h is 0; the model's own is zeroed.h.original
#pragma once

#include <stdbool.h>

#include "lesson_loader.h"

// A block as written under blocks: (its steps are loaded at each application).
typedef struct LessonBlock {
    const char *name;
    const Node *key;
    const Node *inputs, *results, *steps;  // a sequence of names, of names, of steps
    bool applying;  // being applied now: applying it again would never end
} LessonBlock;

// blocks: (node is its value).
bool lesson_load_blocks(Loader *L, const Node *node);
// Whether a step item applies a block: it has `use:` and the lesson has blocks: or the item
// has another key of an application.
bool lesson_block_is_use(const Loader *L, const Node *item);
// Load the block's steps once per application, appended to lesson->steps.
bool lesson_apply_block(Loader *L, const Node *item);
// After a block's step is loaded: when an application's replace: names it, the step that
// stands in for it (lesson_load_replacement); false with a located error.
bool lesson_block_replace(Loader *L);
// A block's step key q while an application is loaded: its name in the lesson (layer1.q),
// defined and added to the application's scope; NULL with a located error.
const char *lesson_block_name(Loader *L, const Node *key);

// yamldoc: a YAML file read into a tree of nodes that remember where they stand in the file.
// No meaning is given to anything here: that is lesson.c's work.
//
// Lessons are plain YAML: the loader refuses what a lesson never needs and a hostile file
// could abuse (anchors and aliases, tags, duplicate keys, more than one document, nesting
// deeper than YAMLDOC_MAX_DEPTH), each with a located error.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "util.h"

#define YAMLDOC_MAX_DEPTH 32
#define YAMLDOC_MAX_BYTES ((size_t)4 << 20)  // 4 MiB: a lesson is a page or two

typedef enum NodeKind {
    NODE_SCALAR,
    NODE_SEQUENCE,
    NODE_MAPPING,
} NodeKind;

typedef enum ScalarStyle {
    SCALAR_PLAIN,
    SCALAR_SINGLE_QUOTED,
    SCALAR_DOUBLE_QUOTED,
    SCALAR_LITERAL,  // |
    SCALAR_FOLDED,   // >
} ScalarStyle;

typedef struct Node Node;

typedef struct NodePair {
    Node *key;  // always a scalar
    Node *value;
} NodePair;

struct Node {
    NodeKind kind;
    size_t line, col;          // 1-based place of the node's first character
    size_t end_line, end_col;  // 1-based place just after its last character
    // NODE_SCALAR: the text as YAML reads it (quotes removed, escapes applied).
    const char *text;
    size_t text_len;
    ScalarStyle style;
    // NODE_SEQUENCE
    Node **items;
    size_t n_items;
    // NODE_MAPPING, in file order
    NodePair *pairs;
    size_t n_pairs;
};

typedef struct YamlDoc {
    Arena *arena;   // owns every node and string
    Source source;  // path and the file's bytes, for quoting lines in errors
    Node *root;     // NULL for an empty file (or one with only comments)
} YamlDoc;

// Parse len bytes (need not be NUL-terminated; copied) read from path. On failure returns
// NULL with a located error in diag. A UTF-8 byte-order mark and CRLF line ends are fine.
YamlDoc *yamldoc_create(const char *path, const char *bytes, size_t len, Diag *diag);
void yamldoc_destroy(YamlDoc *doc);  // accepts NULL

// The value for key in a mapping node, or NULL.
const Node *yamldoc_get(const Node *mapping, const char *key);
// Node kind in a learner's words: "a number or word", "a list", "a mapping".
const char *yamldoc_kind_name(NodeKind kind);
// How many columns a caret under node should cover: its extent when it sits on one line, else 1.
size_t yamldoc_node_width(const Node *node);

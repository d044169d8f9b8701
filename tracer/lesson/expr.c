// expr: a recursive-descent parser for step expressions.
#include "expr.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "safetext.h"

typedef enum TokenKind {
    TOK_END,
    TOK_NUMBER,
    TOK_NAME,
    TOK_PUNCT,  // one of + - * / % @ ( ) [ ] , : = . < > and "**" "//" "==" "!=" "<=" ">="
} TokenKind;

typedef struct Token {
    TokenKind kind;
    size_t pos, len;
    double number;
    char punct;  // '^' for "**"; the comparisons as expr.h names them
} Token;

typedef struct Parser {
    Arena *arena;
    const char *text;
    size_t at;  // next byte to scan
    Token tok;  // the current token
    int depth;
    ExprError *err;
    bool failed;
} Parser;

static bool fail(Parser *p, size_t pos, size_t width, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static bool fail(Parser *p, size_t pos, size_t width, const char *hint, const char *fmt, ...) {
    if (p->failed)
        return false;
    p->failed = true;
    p->err->pos = pos;
    p->err->width = width ? width : 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err->message, sizeof(p->err->message), fmt, ap);
    va_end(ap);
    snprintf(p->err->hint, sizeof(p->err->hint), "%s", hint ? hint : "");
    return false;
}

static bool out_of_memory(Parser *p) {
    p->failed = true;
    p->err->message[0] = '\0';
    return false;
}

const char *expr_op_text(char op) {
    switch (op) {
    case '+': return "+";
    case '-': return "-";
    case '*': return "*";
    case '/': return "/";
    case OP_TOKEN_FLOOR_DIV: return "//";
    case '%': return "%";
    case '@': return "@";
    case '^': return "**";
    case OP_TOKEN_EQ: return "==";
    case OP_TOKEN_NE: return "!=";
    case '<': return "<";
    case OP_TOKEN_LE: return "<=";
    case '>': return ">";
    case OP_TOKEN_GE: return ">=";
    case OP_TOKEN_NOT: return "not";
    case OP_TOKEN_AND: return "and";
    case OP_TOKEN_OR: return "or";
    default: return "?";
    }
}

// ---------------------------------------------------------------- scanner

static bool scan(Parser *p) {
    const char *s = p->text;
    while (s[p->at] == ' ' || s[p->at] == '\t' || s[p->at] == '\n' || s[p->at] == '\r')
        p->at++;
    Token *t = &p->tok;
    memset(t, 0, sizeof(*t));
    t->pos = p->at;
    char c = s[p->at];
    if (c == '\0') {
        t->kind = TOK_END;
        return true;
    }
    if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)s[p->at + 1]))) {
        size_t i = p->at;
        while (isdigit((unsigned char)s[i]))
            i++;
        if (s[i] == '.' && s[i + 1] != 'T') {  // "2.T" would be odd, but keep "x.T" working
            i++;
            while (isdigit((unsigned char)s[i]))
                i++;
        }
        if (s[i] == 'e' || s[i] == 'E') {
            size_t j = i + 1;
            if (s[j] == '+' || s[j] == '-')
                j++;
            if (isdigit((unsigned char)s[j])) {
                while (isdigit((unsigned char)s[j]))
                    j++;
                i = j;
            }
        }
        if (isalpha((unsigned char)s[i]) || s[i] == '_') {
            // Quote the whole word ("1abc", not "1a"), so the learner sees what was read.
            size_t j = i;
            while (isalnum((unsigned char)s[j]) || s[j] == '_')
                j++;
            char hint[160];
            if ((s[i] == 'e' || s[i] == 'E') && j == i + 1)
                snprintf(hint, sizeof(hint), "an exponent needs digits, as in 1e-5");
            else if (s[p->at] == '0' && (s[i] == 'x' || s[i] == 'X') && i == p->at + 1 && j > i + 1 &&
                     j - p->at < 18 && strspn(s + i + 1, "0123456789abcdefABCDEF") == j - i - 1)
                snprintf(hint, sizeof(hint), "write numbers in decimal: %.*s is %llu", (int)(j - p->at),
                         s + p->at, strtoull(s + p->at, NULL, 16));
            else
                snprintf(hint, sizeof(hint), "names start with a letter or '_'; to multiply, write %.*s * %.*s",
                         (int)(i - p->at), s + p->at, (int)(j - i), s + i);
            return fail(p, p->at, j - p->at, hint, "'%.*s' is neither a number nor a name", (int)(j - p->at),
                        s + p->at);
        }
        char buf[64];
        if (i - p->at >= sizeof(buf))
            return fail(p, p->at, i - p->at, "write it with an exponent, as in 1e-70",
                        "this number has too many digits");
        memcpy(buf, s + p->at, i - p->at);
        buf[i - p->at] = '\0';
        errno = 0;
        t->number = strtod(buf, NULL);
        if (errno == ERANGE && isinf(t->number))
            return fail(p, p->at, i - p->at, "the largest double is about 1.8e308",
                        "the number %s is too large for a double", buf);
        t->kind = TOK_NUMBER;
        t->len = i - p->at;
        p->at = i;
        return true;
    }
    if (isalpha((unsigned char)c) || c == '_') {
        size_t i = p->at;
        while (isalnum((unsigned char)s[i]) || s[i] == '_')
            i++;
        t->kind = TOK_NAME;
        t->len = i - p->at;
        const OpDef *word = ops_word(s + p->at, t->len);  // and, or, not: operators
        if (word) {
            t->kind = TOK_PUNCT;
            t->punct = word->token;
        }
        p->at = i;
        return true;
    }
    if (c == '*' && s[p->at + 1] == '*') {
        t->kind = TOK_PUNCT;
        t->punct = '^';
        t->len = 2;
        p->at += 2;
        return true;
    }
    // Two-character operators first, so that "==" is not read as a keyword's '=' nor "//" as two '/'.
    static const struct { char text[3], punct; } pairs[] = {{"==", OP_TOKEN_EQ},
                                                           {"!=", OP_TOKEN_NE},
                                                           {"<=", OP_TOKEN_LE},
                                                           {">=", OP_TOKEN_GE},
                                                           {"//", OP_TOKEN_FLOOR_DIV}};
    for (size_t k = 0; k < ARRAY_LEN(pairs); k++)
        if (c == pairs[k].text[0] && s[p->at + 1] == pairs[k].text[1]) {
            t->kind = TOK_PUNCT;
            t->punct = pairs[k].punct;
            t->len = 2;
            p->at += 2;
            return true;
        }
    if (c == '!')
        return fail(p, p->at, 1, "write 'not equal' as a != b", "'!' is not an operator here");
    if (strchr("+-*/%@()[],:=.<>", c)) {
        t->kind = TOK_PUNCT;
        t->punct = c;
        t->len = 1;
        p->at++;
        return true;
    }
    if (c == '^')
        return fail(p, p->at, 1, "write a power as a ** b, as in Python", "'^' is not an operator here");
    if (c == '\xC3' && s[p->at + 1] == '\x97')
        return fail(p, p->at, 1, "write a matrix product as A @ B, and an elementwise product as a * b",
                    "'\xC3\x97' is not an operator here");
    uint32_t code = 0;
    SafetextKind kind;
    if ((unsigned char)c >= 0x80)
        safetext_next(s + p->at, strlen(s + p->at), &code, &kind);
    if (safetext_invisible_name(code))
        return fail(p, p->at, 1, "delete it: most editors do not show it",
                    "the invisible character U+%04X (%s) cannot appear in an expression", (unsigned)code,
                    safetext_invisible_name(code));
    if ((unsigned char)c >= 0x80)
        return fail(p, p->at, 1, "expressions use ASCII: names, numbers and + - * / // % @ ** == < > ( ) [ ] , : .",
                    "this character cannot appear in an expression");
    if (c == '\'' || c == '"')
        return fail(p, p->at, 1, "an expression has no text in quotes: write names and numbers plainly",
                    "a quote (%c) cannot appear inside an expression", c);
    return fail(p, p->at, 1, "expressions use names, numbers and + - * / // % @ ** == < > ( ) [ ] , : .",
                "'%c' cannot appear in an expression", c);
}

static bool is_punct(const Parser *p, char c) {
    return p->tok.kind == TOK_PUNCT && p->tok.punct == c;
}

static const char *token_text(const Parser *p, char *buf, size_t cap) {
    if (p->tok.kind == TOK_END)
        return "the end of the expression";
    snprintf(buf, cap, "'%.*s'", (int)p->tok.len, p->text + p->tok.pos);
    return buf;
}

// Expect the bracket c that closes the one at open_pos.
static bool expect(Parser *p, char c, const char *what, size_t open_pos) {
    if (is_punct(p, c))
        return scan(p);
    char buf[80];
    char hint[128] = "";
    // Only the end or a closing bracket of the other kind means this one is never closed;
    // a value here means a separator is missing, as in [1 2] or f(x y).
    if (p->tok.kind == TOK_END || is_punct(p, ')') || is_punct(p, ']')) {
        // Name the bracket by what stands before it ("mean(", "x["): a column inside the
        // expression would not match the column of the file that the error shows.
        const char *t = p->text;
        char open = t[open_pos];
        size_t word = open_pos, before = open_pos;
        while (word > 0 && (isalnum((unsigned char)t[word - 1]) || t[word - 1] == '_'))
            word--;
        while (before > 0 && (t[before - 1] == ' ' || t[before - 1] == '\t'))
            before--;
        if (word < open_pos)
            snprintf(hint, sizeof(hint), "the '%c' after '%.*s' is never closed", open,
                     (int)(open_pos - word), t + word);
        else if (before == 0)
            snprintf(hint, sizeof(hint), "the '%c' at the start of the expression is never closed", open);
        else
            snprintf(hint, sizeof(hint), "the '%c' after '%c' is never closed", open, t[before - 1]);
    }
    // ('(' and '[' never stand here: after a value they open a call or an index.)
    else if (p->tok.kind == TOK_NAME || p->tok.kind == TOK_NUMBER)
        snprintf(hint, sizeof(hint), "is %s missing between the two values?",
                 strchr(what, ',') ? "a ',' or an operator" : "an operator");
    return fail(p, p->tok.pos, p->tok.len, hint[0] ? hint : NULL, "expected %s, found %s", what,
                token_text(p, buf, sizeof(buf)));
}

// ---------------------------------------------------------------- tree

static Expr *new_expr(Parser *p, ExprKind kind, size_t start) {
    Expr *e = arena_alloc(p->arena, sizeof(Expr));
    if (!e) {
        out_of_memory(p);
        return NULL;
    }
    e->kind = kind;
    e->start = start;
    e->height = 1;
    return e;
}

// Set e's height from its children (args already stored); refuse a tree too deep to check.
static bool grow(Parser *p, Expr *e) {
    for (size_t i = 0; i < e->n_args; i++)
        if (e->args[i] && e->args[i]->height >= e->height)
            e->height = e->args[i]->height + 1;
    if (e->height <= EXPR_MAX_HEIGHT)
        return true;
    size_t pos = e->op_len ? e->op_pos : e->start;
    size_t width = e->op_len ? e->op_len : 1;
    return fail(p, pos, width, "split it into several steps: a step can use the results of the steps above it",
                "this expression is too long: it chains more than %d operations", EXPR_MAX_HEIGHT);
}

// A growable list of children, copied into the arena at the end.
typedef struct ExprList {
    Expr *items[OP_MAX_ARGS];
    const char *names[OP_MAX_ARGS];
    size_t name_pos[OP_MAX_ARGS];
    size_t n;
} ExprList;

static bool list_push(Parser *p, ExprList *list, Expr *e, const char *name, size_t name_pos) {
    if (list->n == ARRAY_LEN(list->items))
        return fail(p, e->start, e->end - e->start, "write a long list of numbers under given: and use its name here",
                    "more than %d items in one list or call", OP_MAX_ARGS);
    list->items[list->n] = e;
    list->names[list->n] = name;
    list->name_pos[list->n] = name_pos;
    list->n++;
    return true;
}

static bool list_store(Parser *p, Expr *e, const ExprList *list, bool with_names) {
    e->n_args = list->n;
    e->args = arena_array(p->arena, list->n, sizeof(Expr *));
    if (!e->args)
        return out_of_memory(p);
    memcpy(e->args, list->items, list->n * sizeof(Expr *));
    if (with_names) {
        e->arg_names = arena_array(p->arena, list->n, sizeof(char *));
        if (!e->arg_names)
            return out_of_memory(p);
        memcpy(e->arg_names, list->names, list->n * sizeof(char *));
        e->arg_name_pos = arena_array(p->arena, list->n, sizeof(size_t));
        if (!e->arg_name_pos)
            return out_of_memory(p);
        memcpy(e->arg_name_pos, list->name_pos, list->n * sizeof(size_t));
    }
    return grow(p, e);
}

static Expr *parse_expr(Parser *p);
static Expr *parse_unary(Parser *p);

static bool enter(Parser *p) {
    if (++p->depth > EXPR_MAX_DEPTH)
        return fail(p, p->tok.pos, p->tok.len, "split the expression into several steps",
                    "the expression nests more than %d levels deep", EXPR_MAX_DEPTH);
    return true;
}

// Does an operator stand just before the current token (spaces aside)?
static bool after_operator(const Parser *p) {
    size_t i = p->tok.pos;
    while (i > 0 && p->text[i - 1] == ' ')
        i--;
    return i > 0 && strchr("+-*/%@", p->text[i - 1]);
}

static Expr *parse_atom(Parser *p) {
    char buf[80];
    size_t start = p->tok.pos;
    if (p->tok.kind == TOK_NUMBER) {
        Expr *e = new_expr(p, EXPR_NUMBER, start);
        if (!e)
            return NULL;
        e->number = p->tok.number;
        e->end = p->tok.pos + p->tok.len;
        e->op_pos = start;
        e->op_len = p->tok.len;
        return scan(p) ? e : NULL;
    }
    if (p->tok.kind == TOK_NAME) {
        Expr *e = new_expr(p, EXPR_NAME, start);
        if (!e)
            return NULL;
        e->name = arena_strndup(p->arena, p->text + start, p->tok.len);
        if (!e->name) {
            out_of_memory(p);
            return NULL;
        }
        e->end = p->tok.pos + p->tok.len;
        e->op_pos = start;
        e->op_len = p->tok.len;
        return scan(p) ? e : NULL;
    }
    if (is_punct(p, '(')) {
        if (!enter(p) || !scan(p))
            return NULL;
        if (is_punct(p, ')')) {
            fail(p, start, 2, NULL, "empty parentheses: put an expression inside");
            return NULL;
        }
        Expr *inner = parse_expr(p);
        if (!inner)
            return NULL;
        size_t close = p->tok.pos;
        if (!expect(p, ')', "')'", start))
            return NULL;
        p->depth--;
        // Keep the parentheses in the range, so that the text of an enclosing operation
        // (a * (b + c)) is whole.
        inner->start = start;
        inner->end = close + 1;
        return inner;
    }
    if (is_punct(p, '[')) {
        if (!enter(p) || !scan(p))
            return NULL;
        Expr *e = new_expr(p, EXPR_LIST, start);
        if (!e)
            return NULL;
        ExprList list = {0};
        if (is_punct(p, ']')) {
            fail(p, start, 2, "write the numbers inside, as in [0, 1, 2]", "an empty list");
            return NULL;
        }
        for (;;) {
            Expr *item = parse_expr(p);
            if (!item || !list_push(p, &list, item, NULL, 0))
                return NULL;
            if (!is_punct(p, ','))
                break;
            if (!scan(p))
                return NULL;
            if (is_punct(p, ']'))
                break;  // a trailing comma, as Python allows
        }
        e->end = p->tok.pos + 1;
        if (!expect(p, ']', "',' or ']'", start) || !list_store(p, e, &list, false))
            return NULL;
        p->depth--;
        return e;
    }
    const char *hint = NULL;
    if (p->tok.kind == TOK_END)
        hint = "the expression stops where a value should follow";
    else if (is_punct(p, ')') || is_punct(p, ']'))
        hint = "a value is missing before this bracket";
    else if (p->tok.kind == TOK_PUNCT && strchr("*/%@+", p->text[p->tok.pos]) && after_operator(p))
        hint = "two operators in a row: a value must stand between them, as in a + b * c";
    else if (is_punct(p, OP_TOKEN_NOT))
        hint = "'not' binds looser than arithmetic and comparisons: put it in brackets, as in a + (not b)";
    else if (is_punct(p, OP_TOKEN_AND) || is_punct(p, OP_TOKEN_OR))
        hint = "'and' and 'or' join two truth values, as in a > 0 and b < 1";
    fail(p, p->tok.pos, p->tok.len, hint, "expected a value (a name, a number, '(' or '['), found %s",
         token_text(p, buf, sizeof(buf)));
    return NULL;
}

static Expr *parse_index_item(Parser *p) {
    size_t start = p->tok.pos;
    Expr *lo = NULL, *hi = NULL;
    if (!is_punct(p, ':')) {
        lo = parse_expr(p);
        if (!lo)
            return NULL;
        if (!is_punct(p, ':'))
            return lo;
    }
    size_t colon = p->tok.pos;
    if (!scan(p))
        return NULL;
    if (!is_punct(p, ',') && !is_punct(p, ']') && !is_punct(p, ':')) {
        hi = parse_expr(p);
        if (!hi)
            return NULL;
    }
    if (is_punct(p, ':')) {
        fail(p, p->tok.pos, 1, "write start:stop; steps are not supported", "a slice takes no step");
        return NULL;
    }
    Expr *e = new_expr(p, EXPR_SLICE, start);
    if (!e)
        return NULL;
    e->op_pos = colon;
    e->op_len = 1;
    e->end = hi ? hi->end : colon + 1;
    Expr *pair[2] = {lo, hi};
    e->args = arena_array(p->arena, 2, sizeof(Expr *));
    if (!e->args) {
        out_of_memory(p);
        return NULL;
    }
    memcpy(e->args, pair, sizeof(pair));
    e->n_args = 2;
    return grow(p, e) ? e : NULL;
}

static Expr *parse_postfix(Parser *p) {
    char buf[80];
    Expr *e = parse_atom(p);
    while (e) {
        size_t pos = p->tok.pos;
        if (is_punct(p, '.')) {
            if (!scan(p))
                return NULL;
            // layer1.y: a stage of a block's application is named by the application's name, a
            // dot and the block's own name (nested blocks: a dot each). .T stays the transpose.
            bool transpose = p->tok.kind == TOK_NAME && p->tok.len == 1 && p->text[p->tok.pos] == 'T';
            if (p->tok.kind == TOK_NAME && !transpose && e->kind == EXPR_NAME && e->start == e->op_pos &&
                pos == e->op_pos + e->op_len) {
                char *name = arena_printf(p->arena, "%s.%.*s", e->name, (int)p->tok.len, p->text + p->tok.pos);
                if (!name) {
                    out_of_memory(p);
                    return NULL;
                }
                e->name = name;
                e->end = p->tok.pos + p->tok.len;
                e->op_len = e->end - e->op_pos;
                if (!scan(p))
                    return NULL;
                continue;
            }
            if (!transpose) {
                const char *hint = "the only attribute is .T (the transpose); functions are called as f(x)";
                if (p->tok.kind == TOK_NAME)
                    fail(p, pos, p->tok.pos + p->tok.len - pos, hint, "unknown attribute '.%.*s'",
                         (int)p->tok.len, p->text + p->tok.pos);
                else
                    fail(p, pos, 1, hint, "expected T after '.', found %s", token_text(p, buf, sizeof(buf)));
                return NULL;
            }
            Expr *t = new_expr(p, EXPR_TRANSPOSE, e->start);
            if (!t)
                return NULL;
            t->args = arena_array(p->arena, 1, sizeof(Expr *));
            if (!t->args) {
                out_of_memory(p);
                return NULL;
            }
            t->args[0] = e;
            t->n_args = 1;
            t->op_pos = pos;
            t->op_len = 2;
            t->end = p->tok.pos + p->tok.len;
            if (!grow(p, t) || !scan(p))
                return NULL;
            e = t;
        } else if (is_punct(p, '[')) {
            if (!enter(p) || !scan(p))
                return NULL;
            if (is_punct(p, ']')) {
                fail(p, pos, 2, "write an index, as in X[0] or X[0:2] or X[:, 1]", "empty brackets");
                return NULL;
            }
            Expr *ix = new_expr(p, EXPR_INDEX, e->start);
            if (!ix)
                return NULL;
            ExprList list = {0};
            bool pushed = list_push(p, &list, e, NULL, 0);
            ASSERT(pushed);  // the first of OP_MAX_ARGS places
            for (;;) {
                Expr *item = parse_index_item(p);
                if (!item || !list_push(p, &list, item, NULL, 0))
                    return NULL;
                if (!is_punct(p, ','))
                    break;
                if (!scan(p))
                    return NULL;
                if (is_punct(p, ']'))
                    break;  // X[1,] is X[1], as in numpy
            }
            ix->op_pos = pos;
            ix->end = p->tok.pos + 1;
            ix->op_len = ix->end - pos;
            if (!expect(p, ']', "',' or ']'", pos) || !list_store(p, ix, &list, false))
                return NULL;
            p->depth--;
            e = ix;
        } else if (is_punct(p, '(')) {
            // Only a bare name is a function: (x)(y) reads as a product with '*' left out.
            if (e->kind != EXPR_NAME || e->start != e->op_pos) {
                fail(p, pos, 1, "only functions can be called, as in softmax(x)",
                     "this value cannot be called; is an operator missing before '('?");
                return NULL;
            }
            if (!enter(p) || !scan(p))
                return NULL;
            e->kind = EXPR_CALL;
            ExprList list = {0};
            bool keyword_seen = false;
            while (!is_punct(p, ')')) {
                const char *kw = NULL;
                size_t kw_pos = 0;
                // NAME '=' starts a keyword argument; look ahead without consuming.
                if (p->tok.kind == TOK_NAME) {
                    size_t save_at = p->at;
                    Token save = p->tok;
                    size_t j = p->at;
                    while (p->text[j] == ' ')
                        j++;
                    if (p->text[j] == '=' && p->text[j + 1] != '=') {
                        kw = arena_strndup(p->arena, p->text + save.pos, save.len);
                        if (!kw) {
                            out_of_memory(p);
                            return NULL;
                        }
                        kw_pos = save.pos;
                        p->at = j + 1;
                        if (!scan(p))
                            return NULL;
                        keyword_seen = true;
                    } else {
                        p->at = save_at;
                        p->tok = save;
                    }
                }
                size_t arg_pos = p->tok.pos;
                if (!kw && keyword_seen) {
                    fail(p, arg_pos, p->tok.len, "put positional arguments first, as in mean(x, axis=-1)",
                         "a positional argument after a keyword argument");
                    return NULL;
                }
                Expr *arg = parse_expr(p);
                if (!arg || !list_push(p, &list, arg, kw, kw_pos))
                    return NULL;
                if (!is_punct(p, ','))
                    break;
                if (!scan(p))
                    return NULL;
            }
            e->end = p->tok.pos + 1;
            if (!expect(p, ')', "',' or ')'", pos) || !list_store(p, e, &list, true))
                return NULL;
            p->depth--;
        } else {
            break;
        }
    }
    return e;
}

static Expr *make_binary(Parser *p, char op, size_t op_pos, size_t op_len, Expr *lhs, Expr *rhs) {
    Expr *e = new_expr(p, EXPR_BINARY, lhs->start);
    if (!e)
        return NULL;
    e->op = op;
    e->op_pos = op_pos;
    e->op_len = op_len;
    e->end = rhs->end;
    e->args = arena_array(p->arena, 2, sizeof(Expr *));
    if (!e->args) {
        out_of_memory(p);
        return NULL;
    }
    e->args[0] = lhs;
    e->args[1] = rhs;
    e->n_args = 2;
    return grow(p, e) ? e : NULL;
}

// op operand: -x, not x.
static Expr *make_prefix(Parser *p, char op, size_t op_pos, size_t op_len, Expr *operand) {
    Expr *e = new_expr(p, EXPR_PREFIX, op_pos);
    if (!e)
        return NULL;
    e->op = op;
    e->op_pos = op_pos;
    e->op_len = op_len;
    e->end = operand->end;
    e->args = arena_array(p->arena, 1, sizeof(Expr *));
    if (!e->args) {
        out_of_memory(p);
        return NULL;
    }
    e->args[0] = operand;
    e->n_args = 1;
    return grow(p, e) ? e : NULL;
}

static Expr *parse_power(Parser *p) {
    Expr *base = parse_postfix(p);
    if (!base || !is_punct(p, '^'))
        return base;
    size_t op_pos = p->tok.pos;
    if (!enter(p) || !scan(p))
        return NULL;
    Expr *exponent = parse_unary(p);  // right associative, and 2 ** -1 is fine
    if (!exponent)
        return NULL;
    p->depth--;
    return make_binary(p, '^', op_pos, 2, base, exponent);
}

static Expr *parse_unary(Parser *p) {
    // A unary plus changes nothing; accept it as Python does (a loop: "+ + + x" must not
    // recurse once per sign).
    while (is_punct(p, '+'))
        if (!scan(p))
            return NULL;
    if (!is_punct(p, '-'))
        return parse_power(p);
    size_t start = p->tok.pos;
    if (!enter(p) || !scan(p))
        return NULL;
    Expr *operand = parse_unary(p);
    if (!operand)
        return NULL;
    p->depth--;
    // Fold -number into the literal, so "-1" is a number and not an operation to trace.
    if (operand->kind == EXPR_NUMBER) {
        operand->number = -operand->number;
        operand->start = start;
        operand->op_pos = start;
        operand->op_len = operand->end - start;
        return operand;
    }
    return make_prefix(p, '-', start, 1, operand);
}

static Expr *parse_product(Parser *p) {
    Expr *lhs = parse_unary(p);
    while (lhs && (is_punct(p, '*') || is_punct(p, '/') || is_punct(p, '@') || is_punct(p, OP_TOKEN_FLOOR_DIV) ||
                   is_punct(p, '%'))) {
        char op = p->tok.punct;
        size_t op_pos = p->tok.pos, op_len = p->tok.len;
        if (!scan(p))
            return NULL;
        Expr *rhs = parse_unary(p);
        if (!rhs)
            return NULL;
        lhs = make_binary(p, op, op_pos, op_len, lhs, rhs);
    }
    return lhs;
}

// Every cycle of the recursion passes through a bracket, a call, a unary minus or a power,
// and only those count towards EXPR_MAX_DEPTH, so the limit is the nesting a reader sees.
static Expr *parse_sum(Parser *p) {
    Expr *lhs = parse_product(p);
    while (lhs && (is_punct(p, '+') || is_punct(p, '-'))) {
        char op = p->tok.punct;
        size_t op_pos = p->tok.pos;
        if (!scan(p))
            return NULL;
        Expr *rhs = parse_product(p);
        if (!rhs)
            return NULL;
        lhs = make_binary(p, op, op_pos, 1, lhs, rhs);
    }
    return lhs;
}

static bool is_comparison(const Parser *p) {
    static const char comparisons[] = {OP_TOKEN_EQ, OP_TOKEN_NE, '<', OP_TOKEN_LE, '>', OP_TOKEN_GE, '\0'};
    return p->tok.kind == TOK_PUNCT && strchr(comparisons, p->tok.punct);  // punct is never '\0'
}

// One comparison at most: Python would read a < b < c as a < b and b < c, numpy code rarely
// means it, and a learner is better served by writing the two claims apart.
static Expr *parse_compare(Parser *p) {
    Expr *lhs = parse_sum(p);
    if (!lhs || !is_comparison(p))
        return lhs;
    char op = p->tok.punct;
    size_t op_pos = p->tok.pos, op_len = p->tok.len;
    if (!scan(p))
        return NULL;
    Expr *rhs = parse_sum(p);
    if (!rhs)
        return NULL;
    if (is_comparison(p)) {
        fail(p, p->tok.pos, p->tok.len, "write each comparison apart, as in all(a < b) and all(b < c)",
             "comparisons do not chain here");
        return NULL;
    }
    return make_binary(p, op, op_pos, op_len, lhs, rhs);
}

// not binds looser than a comparison (not a < b is not (a < b)), as in Python.
static Expr *parse_not(Parser *p) {
    if (!is_punct(p, OP_TOKEN_NOT))
        return parse_compare(p);
    size_t start = p->tok.pos, len = p->tok.len;
    if (!enter(p) || !scan(p))
        return NULL;
    Expr *operand = parse_not(p);
    if (!operand)
        return NULL;
    p->depth--;
    return make_prefix(p, OP_TOKEN_NOT, start, len, operand);
}

// a and b, then a or b, each looser than the one before, left to right, as in Python.
static Expr *parse_logical(Parser *p, char token) {
    Expr *lhs = token == OP_TOKEN_OR ? parse_logical(p, OP_TOKEN_AND) : parse_not(p);
    while (lhs && is_punct(p, token)) {
        size_t op_pos = p->tok.pos, op_len = p->tok.len;
        if (!scan(p))
            return NULL;
        Expr *rhs = token == OP_TOKEN_OR ? parse_logical(p, OP_TOKEN_AND) : parse_not(p);
        if (!rhs)
            return NULL;
        lhs = make_binary(p, token, op_pos, op_len, lhs, rhs);
    }
    return lhs;
}

static Expr *parse_expr(Parser *p) {
    return parse_logical(p, OP_TOKEN_OR);
}

Expr *expr_parse(Arena *arena, const char *text, ExprError *err) {
    memset(err, 0, sizeof(*err));
    Parser p = {.arena = arena, .text = text, .err = err};
    if (!scan(&p))
        return NULL;
    if (p.tok.kind == TOK_END) {
        fail(&p, 0, 1, "write an expression, as in X @ W_Q", "the expression is empty");
        return NULL;
    }
    Expr *e = parse_expr(&p);
    if (!e)
        return NULL;
    if (p.tok.kind != TOK_END) {
        char buf[80];
        const char *hint = NULL;
        if (p.tok.kind == TOK_NAME || p.tok.kind == TOK_NUMBER)  // '(' would have been a call
            hint = "is an operator missing between the two values?";
        else if (is_punct(&p, ')') || is_punct(&p, ']'))
            hint = "this bracket closes nothing";
        else if (is_punct(&p, '='))
            hint = "a step is written `name: expression`, without '='";
        else if (is_punct(&p, ','))
            hint = "a step computes one result; to put tensors together, write concat(a, b)";
        else if (is_punct(&p, OP_TOKEN_NOT))
            hint = "'not' goes before a truth value, as in not (a > b); 'not equal' is written a != b";
        fail(&p, p.tok.pos, p.tok.len, hint, "unexpected %s after a complete expression",
             token_text(&p, buf, sizeof(buf)));
        return NULL;
    }
    return e;
}

// ---------------------------------------------------------------- names in a block

void expr_rename(Expr *e, const char *const *from, const char *const *to, size_t n) {
    if (!e)
        return;
    if (e->kind == EXPR_NAME)
        for (size_t i = n; i-- > 0;)  // the latest definition wins
            if (strcmp(e->name, from[i]) == 0) {
                e->name = to[i];
                break;
            }
    for (size_t i = 0; i < e->n_args; i++)
        expr_rename(e->args[i], from, to, n);
}

// ---------------------------------------------------------------- narration

static bool narration_push(Arena *arena, Narration *n, size_t *cap, NarrationPart part) {
    if (n->n_parts == *cap) {
        size_t grown = *cap ? *cap * 2 : 8;
        NarrationPart *parts = arena_array(arena, grown, sizeof(NarrationPart));
        if (!parts)
            return false;
        if (n->n_parts)
            memcpy(parts, n->parts, n->n_parts * sizeof(NarrationPart));
        n->parts = parts;
        *cap = grown;
    }
    n->parts[n->n_parts++] = part;
    return true;
}

static Narration *narration_fail(ExprError *err, size_t pos, size_t width, const char *hint, const char *message) {
    ASSERT(width > 0);
    err->pos = pos;
    err->width = width;
    snprintf(err->message, sizeof(err->message), "%s", message);
    snprintf(err->hint, sizeof(err->hint), "%s", hint);
    return NULL;
}

// ".2f", ".0%", "g" after the placeholder's top-level ':' (spec..end); false when it is none.
static bool parse_format(const char *spec, size_t len, NarrationPart *part) {
    if (len == 1 && spec[0] == 'g') {
        part->format = NARRATION_SHORT;
        return true;
    }
    if (len < 3 || spec[0] != '.' || (spec[len - 1] != 'f' && spec[len - 1] != '%'))
        return false;
    int decimals = 0;
    for (size_t i = 1; i + 1 < len; i++) {
        if (!isdigit((unsigned char)spec[i]) || i > 2)
            return false;
        decimals = decimals * 10 + (spec[i] - '0');
    }
    if (decimals > NARRATION_MAX_DECIMALS)
        return false;
    part->format = spec[len - 1] == 'f' ? NARRATION_FIXED : NARRATION_PERCENT;
    part->decimals = decimals;
    return true;
}

Narration *expr_parse_narration(Arena *arena, const char *text, ExprError *err) {
    memset(err, 0, sizeof(*err));
    Narration *n = arena_alloc(arena, sizeof(Narration));
    StrBuf literal;
    strbuf_init(&literal);
    size_t cap = 0;
    if (!n)
        return NULL;
    for (size_t i = 0;;) {
        char c = text[i];
        bool doubled = (c == '{' || c == '}') && text[i + 1] == c;
        if (c != '\0' && (doubled || (c != '{' && c != '}'))) {
            strbuf_putc(&literal, c);
            i += doubled ? 2 : 1;
            continue;
        }
        if (c == '}') {
            strbuf_finish(&literal);
            return narration_fail(err, i, 1, "write }} for a brace in the text, or open the placeholder with {",
                                  "this } closes no placeholder");
        }
        if (literal.len || literal.failed) {
            const char *copy = literal.failed ? NULL : arena_strndup(arena, literal.data, literal.len);
            if (!copy || !narration_push(arena, n, &cap, (NarrationPart){.text = copy, .text_len = literal.len})) {
                strbuf_finish(&literal);
                return NULL;
            }
            strbuf_clear(&literal);
        }
        if (c == '\0')
            break;
        // A placeholder: up to the matching '}', with ':' at bracket depth 0 starting a format.
        size_t open = i, depth = 0, colon = 0, close = i + 1;
        for (; text[close] && (text[close] != '}' || depth); close++) {
            if (text[close] == '(' || text[close] == '[')
                depth++;
            else if ((text[close] == ')' || text[close] == ']') && depth)
                depth--;
            else if (text[close] == ':' && !depth && !colon)
                colon = close;
            else if (text[close] == '{')
                break;
        }
        if (text[close] != '}') {
            strbuf_finish(&literal);
            return narration_fail(err, open, 1, "close it with }, or write {{ for a brace in the text",
                                  "this { opens a placeholder that is never closed");
        }
        size_t expr_end = colon ? colon : close;
        NarrationPart part = {.expr_offset = open + 1};
        if (colon && !parse_format(text + colon + 1, close - colon - 1, &part)) {
            strbuf_finish(&literal);
            return narration_fail(err, colon + 1, close - colon - 1 ? close - colon - 1 : 1,
                                  "write .2f for 2 decimals, .1% for a percentage with 1 decimal, or g for the "
                                  "shortest exact form",
                                  "unknown number format after ':'");
        }
        char *expr_text = arena_strndup(arena, text + open + 1, expr_end - open - 1);
        if (!expr_text) {
            strbuf_finish(&literal);
            return NULL;
        }
        part.expr_text = expr_text;
        part.expr = expr_parse(arena, expr_text, err);
        if (!part.expr) {
            strbuf_finish(&literal);
            if (err->message[0]) {
                if (strcmp(err->message, "the expression is empty") == 0) {
                    snprintf(err->message, sizeof(err->message), "this placeholder is empty");
                    snprintf(err->hint, sizeof(err->hint),
                             "put an expression in the braces, as {scores[0]}, or write {{ for a brace");
                    err->pos = open;
                    err->width = close - open + 1;
                    return NULL;
                }
                err->pos += open + 1;
            }
            return NULL;
        }
        if (!narration_push(arena, n, &cap, part)) {
            strbuf_finish(&literal);
            return NULL;
        }
        n->n_placeholders++;
        i = close + 1;
    }
    strbuf_finish(&literal);
    return n;
}

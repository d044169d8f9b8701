// Tests of expr: the parse tree of every construct (precedence, associativity, postfix forms),
// the byte ranges errors put carets under, number literals, and every syntax error with its
// exact message, place and hint.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "expr.h"
#include "util.h"

// ---------------------------------------------------------------- helpers

static int make_arena(void **state) {
    *state = arena_create();
    return *state ? 0 : -1;
}

static int free_arena(void **state) {
    arena_destroy(*state);
    return 0;
}

// The tree as an s-expression: "(+ a (* b c))". Numbers print with %.17g so that folding
// and rounding show; "_" is an absent slice bound.
static void tree_text(const Expr *e, char *buf, size_t cap, size_t *used) {
#define PUT(...) (*used += (size_t)snprintf(buf + *used, *used < cap ? cap - *used : 0, __VA_ARGS__))
    if (!e) {
        PUT("_");
        return;
    }
    switch (e->kind) {
    case EXPR_NUMBER:
        PUT("%.17g", e->number);
        return;
    case EXPR_NAME:
        PUT("%s", e->name);
        return;
    case EXPR_LIST:
        PUT("[");
        for (size_t i = 0; i < e->n_args; i++) {
            PUT(i ? " " : "");
            tree_text(e->args[i], buf, cap, used);
        }
        PUT("]");
        return;
    case EXPR_PREFIX:
        PUT("(%s ", e->op == '-' ? "neg" : expr_op_text(e->op));
        break;
    case EXPR_BINARY:
        PUT("(%s ", expr_op_text(e->op));
        break;
    case EXPR_TRANSPOSE:
        PUT("(.T ");
        break;
    case EXPR_INDEX:
        PUT("(index ");
        break;
    case EXPR_SLICE:
        PUT("(: ");
        break;
    case EXPR_CALL:
        PUT("(call %s%s", e->name, e->n_args ? " " : "");
        break;
    }
    for (size_t i = 0; i < e->n_args; i++) {
        PUT(i ? " " : "");
        if (e->kind == EXPR_CALL && e->arg_names[i])
            PUT("%s=", e->arg_names[i]);
        tree_text(e->args[i], buf, cap, used);
    }
    PUT(")");
#undef PUT
}

static const Expr *parse_ok(Arena *arena, const char *text) {
    ExprError err;
    const Expr *e = expr_parse(arena, text, &err);
    if (!e)
        fail_msg("'%s' did not parse: column %zu: %s", text, err.pos + 1, err.message);
    return e;
}

// text parses into the tree `want`.
static void expect_tree(Arena *arena, const char *text, const char *want) {
    const Expr *e = parse_ok(arena, text);
    char got[1024];
    size_t used = 0;
    tree_text(e, got, sizeof(got), &used);
    if (strcmp(got, want) != 0)
        fail_msg("'%s' parsed as %s, expected %s", text, got, want);
}

// The source text of e's range, to compare ranges readably.
static void expect_range(const char *text, const Expr *e, const char *want) {
    char got[256];
    snprintf(got, sizeof(got), "%.*s", (int)(e->end - e->start), text + e->start);
    if (strcmp(got, want) != 0)
        fail_msg("range [%zu, %zu) of '%s' is '%s', expected '%s'", e->start, e->end, text, got, want);
}

static void expect_token(const char *text, const Expr *e, const char *want) {
    char got[256];
    snprintf(got, sizeof(got), "%.*s", (int)e->op_len, text + e->op_pos);
    if (strcmp(got, want) != 0)
        fail_msg("token of '%s' at %zu is '%s', expected '%s'", text, e->op_pos, got, want);
}

// ---------------------------------------------------------------- precedence and associativity

static void test_product_binds_tighter_than_sum(void **state) {
    expect_tree(*state, "a + b * c", "(+ a (* b c))");
    expect_tree(*state, "a * b + c", "(+ (* a b) c)");
    expect_tree(*state, "a - b / c", "(- a (/ b c))");
}

static void test_left_associative(void **state) {
    expect_tree(*state, "a - b - c", "(- (- a b) c)");
    expect_tree(*state, "a / b * c", "(* (/ a b) c)");
    expect_tree(*state, "a @ b @ c", "(@ (@ a b) c)");
    expect_tree(*state, "a / b / c", "(/ (/ a b) c)");
    expect_tree(*state, "a // b % c * d", "(* (% (// a b) c) d)");
}

static void test_matmul_is_a_product(void **state) {
    // Python puts @ with * and /, above + and -.
    expect_tree(*state, "a @ b + c", "(+ (@ a b) c)");
    expect_tree(*state, "a + b @ c", "(+ a (@ b c))");
    expect_tree(*state, "a * b @ c", "(@ (* a b) c)");
}

static void test_logical_precedence(void **state) {
    // As in Python: comparisons, then not, then and, then or, each left to right.
    expect_tree(*state, "not a < b", "(not (< a b))");
    expect_tree(*state, "not a and b", "(and (not a) b)");
    expect_tree(*state, "a or b and c", "(or a (and b c))");
    expect_tree(*state, "a and b or c", "(or (and a b) c)");
    expect_tree(*state, "a or b or c", "(or (or a b) c)");
    expect_tree(*state, "a and b and c", "(and (and a b) c)");
    expect_tree(*state, "not not a", "(not (not a))");
    expect_tree(*state, "a + 1 == b and not c > 0", "(and (== (+ a 1) b) (not (> c 0)))");
    expect_tree(*state, "-a or b", "(or (neg a) b)");
    expect_tree(*state, "f(a and b, axis=0)", "(call f (and a b) axis=0)");
    expect_tree(*state, "x[a or b]", "(index x (or a b))");
    // Only the whole word: names that begin with one are names.
    expect_tree(*state, "android or nothing", "(or android nothing)");
    expect_tree(*state, "not_a and order", "(and not_a order)");
}

static void test_floor_divide_and_remainder_are_products(void **state) {
    // Python puts // and % with * and /, above + and -, below ** and a unary minus.
    expect_tree(*state, "a + b // c", "(+ a (// b c))");
    expect_tree(*state, "a % b - c", "(- (% a b) c)");
    expect_tree(*state, "-a // b", "(// (neg a) b)");
    expect_tree(*state, "-7 % 2 ** 2", "(% -7 (** 2 2))");
}

static void test_power_binds_tighter_than_unary_minus(void **state) {
    // -a ** 2 == -(a ** 2), as in Python.
    expect_tree(*state, "-a ** 2", "(neg (** a 2))");
    expect_tree(*state, "-(a ** 2)", "(neg (** a 2))");
    expect_tree(*state, "(-a) ** 2", "(** (neg a) 2)");
    // A literal is folded only when the minus applies to it alone.
    expect_tree(*state, "-1 ** 2", "(neg (** 1 2))");
    expect_tree(*state, "-a * b", "(* (neg a) b)");
}

static void test_power_takes_a_signed_exponent(void **state) {
    expect_tree(*state, "2 ** -1", "(** 2 -1)");
    expect_tree(*state, "x ** -y", "(** x (neg y))");
    expect_tree(*state, "x ** -y ** 2", "(** x (neg (** y 2)))");
}

static void test_power_is_right_associative(void **state) {
    expect_tree(*state, "a ** b ** c", "(** a (** b c))");
    expect_tree(*state, "a ** b * c", "(* (** a b) c)");
}

static void test_unary_signs(void **state) {
    expect_tree(*state, "+x", "x");
    expect_tree(*state, "+ + x", "x");
    expect_tree(*state, "- -x", "(neg (neg x))");
    expect_tree(*state, "--1", "1");
    expect_tree(*state, "a - -b", "(- a (neg b))");
    expect_tree(*state, "a--1", "(- a -1)");
}

static void test_parentheses_group(void **state) {
    expect_tree(*state, "(a + b) * c", "(* (+ a b) c)");
    expect_tree(*state, "a - (b - c)", "(- a (- b c))");
    expect_tree(*state, "((a))", "a");
}

// ---------------------------------------------------------------- postfix forms and calls

static void test_transpose(void **state) {
    expect_tree(*state, "x.T @ y", "(@ (.T x) y)");
    expect_tree(*state, "Q @ K.T", "(@ Q (.T K))");
    expect_tree(*state, "x.T.T", "(.T (.T x))");
    expect_tree(*state, "(a @ b).T", "(.T (@ a b))");
    expect_tree(*state, "x. T", "(.T x)");
    expect_tree(*state, "-x.T", "(neg (.T x))");
    // "2.T" is the number 2 transposed, not the number "2." followed by a name.
    expect_tree(*state, "2.T", "(.T 2)");
}

// A stage of a block's application is one name with dots (the checker resolves it, or says
// what attribute a name lacks); .T after it is still the transpose.
static void test_dotted_names(void **state) {
    expect_tree(*state, "layer1.y", "layer1.y");
    expect_tree(*state, "layer1.attn.w @ x", "(@ layer1.attn.w x)");
    expect_tree(*state, "layer2.K.T", "(.T layer2.K)");
    expect_tree(*state, "x. y", "x.y");
}

static void test_indexing(void **state) {
    expect_tree(*state, "X[0:2, :]", "(index X (: 0 2) (: _ _))");
    expect_tree(*state, "X[1:]", "(index X (: 1 _))");
    expect_tree(*state, "X[:2]", "(index X (: _ 2))");
    expect_tree(*state, "X[:, -1]", "(index X (: _ _) -1)");
    expect_tree(*state, "X[0][1]", "(index (index X 0) 1)");
    expect_tree(*state, "X[1,]", "(index X 1)");
    expect_tree(*state, "X[n - 1]", "(index X (- n 1))");
    expect_tree(*state, "X.T[0]", "(index (.T X) 0)");
}

static void test_list_index_and_tensor_index(void **state) {
    expect_tree(*state, "E[[0, 1, 2]]", "(index E [0 1 2])");
    expect_tree(*state, "E[ids]", "(index E ids)");
    expect_tree(*state, "E[ids, :]", "(index E ids (: _ _))");
}

static void test_list_literals(void **state) {
    expect_tree(*state, "[1, 2, 3]", "[1 2 3]");
    expect_tree(*state, "[[1, 2], [3, 4]]", "[[1 2] [3 4]]");
    expect_tree(*state, "[1, 2,]", "[1 2]");
    expect_tree(*state, "[-1, a + 1]", "[-1 (+ a 1)]");
}

static void test_calls_with_keywords(void **state) {
    expect_tree(*state, "f(x, axis=-1)", "(call f x axis=-1)");
    expect_tree(*state, "mean(x, axis = 0, keepdims=True)", "(call mean x axis=0 keepdims=True)");
    expect_tree(*state, "f(x,)", "(call f x)");
    expect_tree(*state, "f()", "(call f)");
    expect_tree(*state, "concat(a, b, c, axis=1)", "(call concat a b c axis=1)");
}

static void test_nested_calls(void **state) {
    expect_tree(*state, "softmax(Q @ K.T / sqrt(d_k))", "(call softmax (/ (@ Q (.T K)) (call sqrt d_k)))");
    expect_tree(*state, "exp(log(x))", "(call exp (call log x))");
    expect_tree(*state, "softmax(x)[0]", "(index (call softmax x) 0)");
    expect_tree(*state, "mean(x, axis=-1).T", "(.T (call mean x axis=-1))");
}

static void test_whitespace_between_tokens(void **state) {
    expect_tree(*state, "  a\t+\nb  ", "(+ a b)");
    expect_tree(*state, "a\r\n*\tb", "(* a b)");
    expect_tree(*state, "f ( x )", "(call f x)");
}

// ---------------------------------------------------------------- places

static void test_binary_ranges(void **state) {
    const char *t = "a * (b + c)";
    const Expr *e = parse_ok(*state, t);
    assert_int_equal(e->kind, EXPR_BINARY);
    assert_int_equal(e->start, 0);
    assert_int_equal(e->end, 11);
    expect_token(t, e, "*");
    // The parentheses stay in the inner range, so its text is whole.
    const Expr *inner = e->args[1];
    expect_range(t, inner, "(b + c)");
    assert_int_equal(inner->op_pos, 7);
    assert_int_equal(inner->op_len, 1);
    expect_range(t, inner->args[0], "b");

    t = "x ** 2";
    e = parse_ok(*state, t);
    expect_token(t, e, "**");
    assert_int_equal(e->op_pos, 2);
}

static void test_parenthesised_name_keeps_its_token(void **state) {
    const char *t = "(a)";
    const Expr *e = parse_ok(*state, t);
    assert_int_equal(e->kind, EXPR_NAME);
    expect_range(t, e, "(a)");
    expect_token(t, e, "a");
}

static void test_postfix_ranges(void **state) {
    const char *t = "x.T @ y";
    const Expr *e = parse_ok(*state, t);
    expect_range(t, e->args[0], "x.T");
    expect_token(t, e->args[0], ".T");

    t = "X[0:2, :]";
    e = parse_ok(*state, t);
    assert_int_equal(e->kind, EXPR_INDEX);
    expect_range(t, e, "X[0:2, :]");
    expect_token(t, e, "[0:2, :]");
    assert_int_equal(e->n_args, 3);
    expect_range(t, e->args[1], "0:2");
    expect_token(t, e->args[1], ":");
    assert_int_equal(e->args[1]->op_pos, 3);
    expect_range(t, e->args[2], ":");

    t = "f(x, axis=-1)";
    e = parse_ok(*state, t);
    assert_int_equal(e->kind, EXPR_CALL);
    expect_range(t, e, "f(x, axis=-1)");
    expect_token(t, e, "f");
    assert_null(e->arg_names[0]);
    assert_string_equal(e->arg_names[1], "axis");
    assert_int_equal(e->arg_name_pos[1], 5);
    expect_range(t, e->args[1], "-1");
}

static void test_negation_ranges(void **state) {
    const char *t = "-x * 2";
    const Expr *e = parse_ok(*state, t);
    const Expr *neg = e->args[0];
    assert_int_equal(neg->kind, EXPR_PREFIX);
    assert_int_equal(neg->op, '-');
    expect_range(t, neg, "-x");
    expect_token(t, neg, "-");

    // A folded literal covers its sign.
    t = "y - -1.5";
    e = parse_ok(*state, t);
    assert_int_equal(e->args[1]->kind, EXPR_NUMBER);
    expect_range(t, e->args[1], "-1.5");
    expect_token(t, e->args[1], "-1.5");
}

// ---------------------------------------------------------------- numbers

static double number_of(Arena *arena, const char *text) {
    const Expr *e = parse_ok(arena, text);
    if (e->kind != EXPR_NUMBER)
        fail_msg("'%s' is not a single number", text);
    return e->number;
}

static void test_number_literals(void **state) {
    // strtod reads the same text the same way everywhere, so these compare exactly.
    assert_true(number_of(*state, "1e-5") == 1e-5);
    assert_true(number_of(*state, ".5") == 0.5);
    assert_true(number_of(*state, "5.") == 5.0);
    assert_true(number_of(*state, "1E+2") == 100.0);
    assert_true(number_of(*state, "0.1") == 0.1);
    assert_true(number_of(*state, "007") == 7.0);
    assert_true(number_of(*state, "1e308") == 1e308);
    // Too small to represent reads as 0, as in Python.
    assert_true(number_of(*state, "1e-400") == 0.0);
}

static void test_minus_folds_into_the_number(void **state) {
    const char *t = "-1";
    const Expr *e = parse_ok(*state, t);
    assert_int_equal(e->kind, EXPR_NUMBER);
    assert_true(e->number == -1.0);
    expect_range(t, e, "-1");
    assert_true(number_of(*state, "-2.5e-3") == -2.5e-3);
    assert_true(number_of(*state, "(-1)") == -1.0);
    assert_true(number_of(*state, "-(1)") == -1.0);
}

// ---------------------------------------------------------------- syntax errors

typedef struct SyntaxCase {
    const char *text;
    const char *message;
    size_t pos, width;
    const char *hint;  // "" for none
} SyntaxCase;

static void test_syntax_error(void **state) {
    const SyntaxCase *c = *state;
    Arena *arena = arena_create();
    assert_non_null(arena);
    ExprError err;
    const Expr *e = expr_parse(arena, c->text, &err);
    arena_destroy(arena);
    if (e)
        fail_msg("'%s' parsed, but should fail with: %s", c->text, c->message);
    if (strcmp(err.message, c->message) != 0)
        fail_msg("'%s': message\n  '%s'\nexpected\n  '%s'", c->text, err.message, c->message);
    if (err.pos != c->pos || err.width != c->width)
        fail_msg("'%s': at %zu width %zu, expected at %zu width %zu", c->text, err.pos, err.width, c->pos,
                 c->width);
    if (strcmp(err.hint, c->hint) != 0)
        fail_msg("'%s': hint\n  '%s'\nexpected\n  '%s'", c->text, err.hint, c->hint);
}

#define VALUE_HINT_END "the expression stops where a value should follow"
#define OPERATOR_MISSING "is an operator missing between the two values?"
#define SEPARATOR_MISSING "is a ',' or an operator missing between the two values?"
#define NOT_CALLABLE "this value cannot be called; is an operator missing before '('?"
#define ONLY_FUNCTIONS "only functions can be called, as in softmax(x)"
#define ATTRIBUTE_HINT "the only attribute is .T (the transpose); functions are called as f(x)"
#define ASCII_HINT "expressions use ASCII: names, numbers and + - * / // % @ ** == < > ( ) [ ] , : ."
#define CHAR_HINT "expressions use names, numbers and + - * / // % @ ** == < > ( ) [ ] , : ."
#define AND_OR_HINT "'and' and 'or' join two truth values, as in a > 0 and b < 1"
#define EXPECTED_VALUE "expected a value (a name, a number, '(' or '['), found "
#define NESTS "the expression nests more than 64 levels deep"
#define SPLIT "split the expression into several steps"

// name, text, message, pos, width, hint
#define SYNTAX_CASES(X)                                                                            \
    X(empty, "", "the expression is empty", 0, 1, "write an expression, as in X @ W_Q")            \
    X(only_spaces, "   ", "the expression is empty", 0, 1, "write an expression, as in X @ W_Q")    \
    X(trailing_operator, "a +", EXPECTED_VALUE "the end of the expression", 3, 1, VALUE_HINT_END)  \
    X(trailing_power, "a **", EXPECTED_VALUE "the end of the expression", 4, 1, VALUE_HINT_END)    \
    X(lone_minus, "-", EXPECTED_VALUE "the end of the expression", 1, 1, VALUE_HINT_END)           \
    X(leading_operator, "* a", EXPECTED_VALUE "'*'", 0, 1, "")                                     \
    X(operator_before_bracket, "(a + )", EXPECTED_VALUE "')'", 5, 1,                               \
      "a value is missing before this bracket")                                                    \
    X(two_values, "a b", "unexpected 'b' after a complete expression", 2, 1, OPERATOR_MISSING)     \
    X(value_then_number, "x 2", "unexpected '2' after a complete expression", 2, 1,                \
      OPERATOR_MISSING)                                                                            \
    X(stray_bracket, "a )", "unexpected ')' after a complete expression", 2, 1,                    \
      "this bracket closes nothing")                                                               \
    X(stray_comma, "a, b", "unexpected ',' after a complete expression", 1, 1,                     \
      "a step computes one result; to put tensors together, write concat(a, b)")                   \
    X(assignment, "a = b", "unexpected '=' after a complete expression", 2, 1,                     \
      "a step is written `name: expression`, without '='")                                         \
    X(unclosed_paren, "(a", "expected ')', found the end of the expression", 2, 1,                 \
      "the '(' at the start of the expression is never closed")                                    \
    X(unclosed_inner_paren, "x * (a + b", "expected ')', found the end of the expression", 10, 1,  \
      "the '(' after '*' is never closed")                                                         \
    X(unclosed_call, "mean(x", "expected ',' or ')', found the end of the expression", 6, 1,       \
      "the '(' after 'mean' is never closed")                                                      \
    X(unclosed_index, "x[0", "expected ',' or ']', found the end of the expression", 3, 1,         \
      "the '[' after 'x' is never closed")                                                         \
    X(unclosed_list, "[1, 2", "expected ',' or ']', found the end of the expression", 5, 1,        \
      "the '[' at the start of the expression is never closed")                                    \
    X(wrong_closer, "(a]", "expected ')', found ']'", 2, 1,                                        \
      "the '(' at the start of the expression is never closed")                                    \
    X(missing_comma_in_list, "[1 2]", "expected ',' or ']', found '2'", 3, 1, SEPARATOR_MISSING)   \
    X(missing_comma_in_call, "f(x y)", "expected ',' or ')', found 'y'", 4, 1, SEPARATOR_MISSING)  \
    X(missing_operator_in_parens, "(a b)", "expected ')', found 'b'", 3, 1, OPERATOR_MISSING)      \
    X(empty_parens, "()", "empty parentheses: put an expression inside", 0, 2, "")                 \
    X(empty_brackets, "x[]", "empty brackets", 1, 2, "write an index, as in X[0] or X[0:2] or X[:, 1]") \
    X(empty_list, "[]", "an empty list", 0, 2, "write the numbers inside, as in [0, 1, 2]")        \
    X(leading_comma_in_call, "f(, x)", EXPECTED_VALUE "','", 2, 1, "")                             \
    X(caret_power, "a ^ 2", "'^' is not an operator here", 2, 1, "write a power as a ** b, as in Python") \
    X(times_sign, "a \xC3\x97 b", "'\xC3\x97' is not an operator here", 2, 1,                      \
      "write a matrix product as A @ B, and an elementwise product as a * b")                      \
    X(non_ascii, "a + \xC3\xA9", "this character cannot appear in an expression", 4, 1, ASCII_HINT) \
    X(dollar, "a $ b", "'$' cannot appear in an expression", 2, 1, CHAR_HINT)                      \
    X(bang, "!a", "'!' is not an operator here", 0, 1, "write 'not equal' as a != b")              \
    X(chained_comparison, "a < b < c", "comparisons do not chain here", 6, 1,                        \
      "write each comparison apart, as in all(a < b) and all(b < c)")                                \
    X(trailing_and, "a and", EXPECTED_VALUE "the end of the expression", 5, 1, VALUE_HINT_END)     \
    X(leading_and, "and a", EXPECTED_VALUE "'and'", 0, 3, AND_OR_HINT)                             \
    X(or_or, "a or or b", EXPECTED_VALUE "'or'", 5, 2, AND_OR_HINT)                                \
    X(not_in_sum, "a + not b", EXPECTED_VALUE "'not'", 4, 3,                                       \
      "'not' binds looser than arithmetic and comparisons: put it in brackets, as in a + (not b)") \
    X(not_after_value, "a not b", "unexpected 'not' after a complete expression", 2, 3,            \
      "'not' goes before a truth value, as in not (a > b); 'not equal' is written a != b")         \
    X(lone_not, "not", EXPECTED_VALUE "the end of the expression", 3, 1, VALUE_HINT_END)           \
    X(trailing_floor_divide, "a //", EXPECTED_VALUE "the end of the expression", 4, 1, VALUE_HINT_END) \
    X(floor_divide_spaced, "a / / b", EXPECTED_VALUE "'/'", 4, 1,                                  \
      "two operators in a row: a value must stand between them, as in a + b * c")                  \
    X(remainder_then_floor_divide, "a % // b", EXPECTED_VALUE "'//'", 4, 2,                        \
      "two operators in a row: a value must stand between them, as in a + b * c")                  \
    X(digit_then_letters, "1abc", "'1abc' is neither a number nor a name", 0, 4,                   \
      "names start with a letter or '_'; to multiply, write 1 * abc")                              \
    X(implicit_product, "a + 2x", "'2x' is neither a number nor a name", 4, 2,                     \
      "names start with a letter or '_'; to multiply, write 2 * x")                                \
    X(exponent_without_digits, "1e", "'1e' is neither a number nor a name", 0, 2,                  \
      "an exponent needs digits, as in 1e-5")                                \
    X(number_too_large, "1e400", "the number 1e400 is too large for a double", 0, 5,               \
      "the largest double is about 1.8e308")                                                       \
    X(negative_number_too_large, "-1e400", "the number 1e400 is too large for a double", 1, 5,     \
      "the largest double is about 1.8e308")                                                       \
    X(too_many_digits, "0.0000000000000000000000000000000000000000000000000000000000000001",       \
      "this number has too many digits", 0, 66, "write it with an exponent, as in 1e-70")          \
    X(slice_with_step, "x[0:4:2]", "a slice takes no step", 5, 1,                                  \
      "write start:stop; steps are not supported")                                                 \
    X(slice_with_only_step, "x[::2]", "a slice takes no step", 3, 1,                               \
      "write start:stop; steps are not supported")                                                 \
    X(unknown_attribute, "x.T.foo", "unknown attribute '.foo'", 3, 4, ATTRIBUTE_HINT)            \
    X(lowercase_transpose, "(x).t @ y", "unknown attribute '.t'", 3, 2, ATTRIBUTE_HINT)           \
    X(nothing_after_dot, "x.", "expected T after '.', found the end of the expression", 1, 1,      \
      ATTRIBUTE_HINT)                                                                              \
    X(call_parenthesised_name, "(x)(y)", NOT_CALLABLE, 3, 1, ONLY_FUNCTIONS)                       \
    X(call_sum, "(a + b)(c)", NOT_CALLABLE, 7, 1, ONLY_FUNCTIONS)                                  \
    X(call_number, "2(x)", NOT_CALLABLE, 1, 1, ONLY_FUNCTIONS)                                     \
    X(call_transpose, "x.T(y)", NOT_CALLABLE, 3, 1, ONLY_FUNCTIONS)                                \
    X(call_a_call, "f(x)(y)", NOT_CALLABLE, 4, 1, ONLY_FUNCTIONS)                                  \
    X(positional_after_keyword, "mean(axis=1, x)", "a positional argument after a keyword argument", \
      13, 1, "put positional arguments first, as in mean(x, axis=-1)")                             \
    X(keyword_without_value, "mean(x, axis=)", EXPECTED_VALUE "')'", 13, 1,                        \
      "a value is missing before this bracket") \
    X(dollar_after_paren, "($", "'$' cannot appear in an expression", 1, 1, CHAR_HINT) \
    X(dollar_after_list_open, "[$", "'$' cannot appear in an expression", 1, 1, CHAR_HINT) \
    X(dollar_after_list_comma, "[1,$", "'$' cannot appear in an expression", 3, 1, CHAR_HINT) \
    X(dollar_after_index_open, "x[$", "'$' cannot appear in an expression", 2, 1, CHAR_HINT) \
    X(dollar_after_index_comma, "x[1,$", "'$' cannot appear in an expression", 4, 1, CHAR_HINT) \
    X(dollar_after_colon, "x[1:$", "'$' cannot appear in an expression", 4, 1, CHAR_HINT) \
    X(dollar_after_dot, "x.$", "'$' cannot appear in an expression", 2, 1, CHAR_HINT) \
    X(dollar_after_call_open, "f($", "'$' cannot appear in an expression", 2, 1, CHAR_HINT) \
    X(dollar_after_argument_comma, "f(a,$", "'$' cannot appear in an expression", 4, 1, CHAR_HINT) \
    X(dollar_after_keyword, "f(k=$", "'$' cannot appear in an expression", 4, 1, CHAR_HINT) \
    X(dollar_after_minus, "-$", "'$' cannot appear in an expression", 1, 1, CHAR_HINT) \
    X(dollar_after_power, "a**$", "'$' cannot appear in an expression", 3, 1, CHAR_HINT) \
    X(dollar_after_close, "(a)$", "'$' cannot appear in an expression", 3, 1, CHAR_HINT) \
    X(dollar_after_transpose, "x.T$", "'$' cannot appear in an expression", 3, 1, CHAR_HINT) \
    X(dollar_after_index_close, "x[0]$", "'$' cannot appear in an expression", 4, 1, CHAR_HINT) \
    X(dollar_after_call_close, "f(x)$", "'$' cannot appear in an expression", 4, 1, CHAR_HINT) \
    X(dollar_after_list_close, "[1]$", "'$' cannot appear in an expression", 3, 1, CHAR_HINT) \
    X(dollar_after_slice_colon_only, "x[:$", "'$' cannot appear in an expression", 3, 1, CHAR_HINT) \
    X(exponent_upper_without_digits, "2E", "'2E' is neither a number nor a name", 0, 2,               \
      "an exponent needs digits, as in 1e-5")                                                      \
    X(hex_upper, "0X1f", "'0X1f' is neither a number nor a name", 0, 4, "write numbers in decimal: 0X1f is 31") \
    X(hex_not_hex_digits, "0xZZ", "'0xZZ' is neither a number nor a name", 0, 4,                     \
      "names start with a letter or '_'; to multiply, write 0 * xZZ")                             \
    X(hex_too_long, "0x123456789012345678", "'0x123456789012345678' is neither a number nor a name", 0, 20, \
      "names start with a letter or '_'; to multiply, write 0 * x123456789012345678")            \
    X(x_without_hex_digits, "0x", "'0x' is neither a number nor a name", 0, 2,                       \
      "names start with a letter or '_'; to multiply, write 0 * x")                                \
    X(digit_then_underscore, "1_a", "'1_a' is neither a number nor a name", 0, 3,                    \
      "names start with a letter or '_'; to multiply, write 1 * _a")                               \
    X(single_quote, "a + 'b'", "a quote (') cannot appear inside an expression", 4, 1,               \
      "an expression has no text in quotes: write names and numbers plainly") \
    X(double_quote, "a + \"b\"", "a quote (\") cannot appear inside an expression", 4, 1,            \
      "an expression has no text in quotes: write names and numbers plainly")                      \
    X(exponent_then_letter, "1ex", "'1ex' is neither a number nor a name", 0, 3,                     \
      "names start with a letter or '_'; to multiply, write 1 * ex")                               \
    X(x_after_one, "1x5", "'1x5' is neither a number nor a name", 0, 3,                              \
      "names start with a letter or '_'; to multiply, write 1 * x5")                               \
    X(unclosed_call_with_underscore, "my_f(x", "expected ',' or ')', found the end of the expression", 6, 1, \
      "the '(' after 'my_f' is never closed")                                                      \
    X(unclosed_paren_after_tab, "x *\t(a", "expected ')', found the end of the expression", 6, 1,     \
      "the '(' after '*' is never closed")                                                         \
    X(paren_then_bracket, "(]", EXPECTED_VALUE "']'", 1, 1, "a value is missing before this bracket") \
    X(dollar_after_plus, "+$", "'$' cannot appear in an expression", 1, 1, CHAR_HINT)               \
    X(dollar_after_number, "1 $", "'$' cannot appear in an expression", 2, 1, CHAR_HINT)             \
    X(dollar_after_comparison, "a < $", "'$' cannot appear in an expression", 4, 1, CHAR_HINT)       \
    X(comparison_without_right_side, "a < )", EXPECTED_VALUE "')'", 4, 1,                            \
      "a value is missing before this bracket")                                                    \
    X(comma_in_parens, "(a, b)", "expected ')', found ','", 2, 1, "")                              \
    X(operator_after_paren, "(* a)", EXPECTED_VALUE "'*'", 1, 1, "")                               \
    X(comma_after_operator, "a + ,", EXPECTED_VALUE "','", 4, 1, "")                               \
    X(colon_outside_brackets, "a:b", "unexpected ':' after a complete expression", 1, 1, "")        \
    X(two_zeros_then_x, "00x1", "'00x1' is neither a number nor a name", 0, 4,                       \
      "names start with a letter or '_'; to multiply, write 00 * x1")

#define DEFINE_CASE(name, text, message, pos, width, hint) \
    static SyntaxCase case_##name = {text, message, pos, width, hint};
SYNTAX_CASES(DEFINE_CASE)

// Cases built at run time: too deep, too long.
static char deep_parens[2 * 65 + 2], deep_minus[2 * 65 + 2], deep_power[4 * 65 + 2], many_items[400],
    many_indices[400], many_arguments[400], tall_list[2 * 256 + 2], tall_slice[2 * 256 + 4], tall_sum[2 * 257];
static SyntaxCase case_deep_parens = {deep_parens, NESTS, 64, 1, SPLIT};
static SyntaxCase case_deep_minus = {deep_minus, NESTS, 2 * 64, 1, SPLIT};
static SyntaxCase case_deep_power = {deep_power, NESTS, 0, 2, SPLIT};
// [a+a+...+a], 256 a's: the sum is 256 operations tall, the limit; the list around it is one
// more, and a list has no operator, so the caret goes under its '['.
static SyntaxCase case_tall_list = {tall_list, "this expression is too long: it chains more than 256 operations", 0,
                                    1, "split it into several steps: a step can use the results of the steps above it"};
// x[a+...+a:], the same sum as a slice's start: the caret goes under the slice's ':'.
static SyntaxCase case_tall_slice = {tall_slice, "this expression is too long: it chains more than 256 operations",
                                     2 + 2 * 255 + 1, 1,
                                     "split it into several steps: a step can use the results of the steps above it"};
// a+a+...+a, 257 a's: the 256th '+' is one operation too many.
static SyntaxCase case_tall_sum = {tall_sum, "this expression is too long: it chains more than 256 operations",
                                   2 * 256 - 1, 1,
                                   "split it into several steps: a step can use the results of the steps above it"};
static SyntaxCase case_too_many_items = {many_items, "more than 64 items in one list or call", 0, 2,
                                         "write a long list of numbers under given: and use its name here"};
static SyntaxCase case_too_many_indices = {many_indices, "more than 64 items in one list or call", 0, 2,
                                           "write a long list of numbers under given: and use its name here"};
static SyntaxCase case_too_many_arguments = {many_arguments, "more than 64 items in one list or call", 0, 2,
                                             "write a long list of numbers under given: and use its name here"};

// open, then 0, 1, ..., 64 (65 items), then close; *pos: where the 65th item starts.
static void build_many(char *text, size_t cap, const char *open, const char *close, size_t *pos) {
    size_t n = (size_t)snprintf(text, cap, "%s", open);
    for (int i = 0; i <= 64; i++) {
        if (i == 64)
            *pos = n + 2;
        n += (size_t)snprintf(text + n, cap - n, "%s%d", i ? ", " : "", i);
    }
    snprintf(text + n, cap - n, "%s", close);
}

static void build_long_cases(void) {
    // 65 '(' around x: the 65th is one level too many.
    size_t n = 0;
    for (int i = 0; i < 65; i++)
        deep_parens[n++] = '(';
    deep_parens[n++] = 'x';
    for (int i = 0; i < 65; i++)
        deep_parens[n++] = ')';
    deep_parens[n] = '\0';
    // "- - - ... x": 65 signs.
    n = 0;
    for (int i = 0; i < 65; i++) {
        deep_minus[n++] = '-';
        deep_minus[n++] = ' ';
    }
    deep_minus[n++] = 'x';
    deep_minus[n] = '\0';
    // "x**x**...**x": 65 powers, the 65th '**' is too deep.
    n = 0;
    for (int i = 0; i < 65; i++) {
        memcpy(deep_power + n, "x**", 3);
        n += 3;
    }
    deep_power[n++] = 'x';
    deep_power[n] = '\0';
    case_deep_power.pos = 64 * 3 + 1;
    build_many(many_items, sizeof(many_items), "[", "]", &case_too_many_items.pos);
    // the tensor indexed is the first item, so 64 indices fit and the 65th index is refused
    build_many(many_indices, sizeof(many_indices), "x[", "]", &case_too_many_indices.pos);
    case_too_many_indices.pos = (size_t)(strstr(many_indices, ", 63,") + 2 - many_indices);
    build_many(many_arguments, sizeof(many_arguments), "f(", ")", &case_too_many_arguments.pos);
    n = 0;
    tall_list[n++] = '[';
    for (int i = 0; i < 256; i++) {
        tall_list[n++] = i ? '+' : 'a';
        if (i)
            tall_list[n++] = 'a';
    }
    tall_list[n++] = ']';
    tall_list[n] = '\0';
    snprintf(tall_slice, sizeof(tall_slice), "x[%.*s:]", (int)(n - 2), tall_list + 1);
    n = 0;
    for (int i = 0; i < 257; i++) {
        if (i)
            tall_sum[n++] = '+';
        tall_sum[n++] = 'a';
    }
    tall_sum[n] = '\0';
}

// The deepest nesting allowed still parses.
static void test_nesting_at_the_limit(void **state) {
    char text[2 * 64 + 2];
    size_t n = 0;
    for (int i = 0; i < 64; i++)
        text[n++] = '(';
    text[n++] = 'x';
    for (int i = 0; i < 64; i++)
        text[n++] = ')';
    text[n] = '\0';
    expect_tree(*state, text, "x");
}

// Many unary pluses are a loop, not a recursion: a long run must not exhaust the stack.
static void test_long_run_of_unary_plus(void **state) {
    static char text[200002];
    memset(text, '+', 200000);
    text[200000] = 'x';
    text[200001] = '\0';
    expect_tree(*state, text, "x");
}

static void test_error_is_reset(void **state) {
    ExprError err;
    assert_null(expr_parse(*state, "a +", &err));
    assert_non_null(expr_parse(*state, "a + b", &err));
    assert_string_equal(err.message, "");
    assert_string_equal(err.hint, "");
}

static void test_op_text(void **state) {
    (void)state;
    assert_string_equal(expr_op_text('^'), "**");
    assert_string_equal(expr_op_text('@'), "@");
    assert_string_equal(expr_op_text('+'), "+");
    assert_string_equal(expr_op_text('-'), "-");
    assert_string_equal(expr_op_text('*'), "*");
    assert_string_equal(expr_op_text('/'), "/");
    assert_string_equal(expr_op_text(OP_TOKEN_FLOOR_DIV), "//");
    assert_string_equal(expr_op_text('%'), "%");
    assert_string_equal(expr_op_text(OP_TOKEN_AND), "and");
    assert_string_equal(expr_op_text(OP_TOKEN_OR), "or");
    assert_string_equal(expr_op_text(OP_TOKEN_NOT), "not");
    assert_string_equal(expr_op_text(OP_TOKEN_EQ), "==");
    assert_string_equal(expr_op_text(OP_TOKEN_NE), "!=");
    assert_string_equal(expr_op_text('<'), "<");
    assert_string_equal(expr_op_text(OP_TOKEN_LE), "<=");
    assert_string_equal(expr_op_text('>'), ">");
    assert_string_equal(expr_op_text(OP_TOKEN_GE), ">=");
    assert_string_equal(expr_op_text('x'), "?");
}

// One parse of an expression (narration false) or of a narration (true).
static bool parse_once(Arena *arena, const char *text, bool narration, ExprError *err) {
    if (narration)
        return expr_parse_narration(arena, text, err) != NULL;
    return expr_parse(arena, text, err) != NULL;
}

// Running out of memory at any allocation is reported as such (an empty message), never
// as a syntax error and never as a crash. Arenas take a block for every allocation here, so
// that each arena allocation of the parser fails in turn too.
static void expect_out_of_memory_handled(const char *text, bool narration) {
    util_arena_block_size(1);
    ExprError err;
    util_fail_allocation(0);
    Arena *arena = arena_create();
    assert_non_null(arena);
    if (!parse_once(arena, text, narration, &err))
        fail_msg("'%s' does not parse: %s", text, err.message);
    arena_destroy(arena);
    // Count the allocations of one parse (including the arena's own), then fail each in turn.
    size_t total = util_fail_allocation(0);
    assert_true(total > 1);
    for (size_t k = 1; k <= total; k++) {
        util_fail_allocation(k);
        arena = arena_create();
        bool parsed = arena && parse_once(arena, text, narration, &err);
        util_fail_allocation(0);
        if (arena && parsed)
            fail_msg("'%s' parsed with allocation %zu failing", text, k);
        if (arena && err.message[0])
            fail_msg("'%s': allocation %zu failing gave the syntax error '%s'", text, k, err.message);
        arena_destroy(arena);
    }
    util_arena_block_size(0);
}

static void test_out_of_memory(void **state) {
    (void)state;
    expect_out_of_memory_handled("softmax(Q @ K.T / sqrt(d_k), axis=-1)[0:2, [0, 1]]", false);
    // a negated name, a power, a comparison, a slice, and lists and calls longer than the
    // first block of items
    expect_out_of_memory_handled("-x ** 2 <= mean(X[:, 1:], axis=0) + [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, "
                                 "14, 15, 16, 17] + f(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q)",
                                 false);
    // literal text, placeholders with and without a format, more parts than the first block
    expect_out_of_memory_handled("weights {w[0, 1]:.2f} and {a}{b} {c} {d} {e} {f} {g} {h} {i:g} end", true);
}

// ---------------------------------------------------------------- narration

// The parts of narration as "text|{expr:format}|text", each placeholder's tree in place of
// its expression, e.g. "Divide by |{(sqrt d_k):g}|.".
static void narration_shape(Arena *arena, const char *text, const char *want) {
    ExprError err;
    const Narration *n = expr_parse_narration(arena, text, &err);
    if (!n)
        fail_msg("'%s': %s", text, err.message);
    char buf[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < n->n_parts; i++) {
        const NarrationPart *p = &n->parts[i];
        if (i)
            used += (size_t)snprintf(buf + used, sizeof(buf) - used, "|");
        if (!p->expr) {
            used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%.*s", (int)p->text_len, p->text);
            continue;
        }
        char tree[256];
        size_t t = 0;
        tree_text(p->expr, tree, sizeof(tree), &t);
        const char *format[] = {"", ":f", ":%", ":g"};
        used += (size_t)snprintf(buf + used, sizeof(buf) - used, "{%s%s", tree, format[p->format]);
        if (p->format == NARRATION_FIXED || p->format == NARRATION_PERCENT)
            used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%d", p->decimals);
        used += (size_t)snprintf(buf + used, sizeof(buf) - used, "}");
    }
    assert_string_equal(buf, want);
}

static void test_narration_parts(void **state) {
    Arena *a = *state;
    narration_shape(a, "no placeholder at all", "no placeholder at all");
    narration_shape(a, "", "");
    narration_shape(a, "Divide by sqrt(d_k) = {sqrt(d_k):g}.", "Divide by sqrt(d_k) = |{(call sqrt d_k):g}|.");
    narration_shape(a, "{weights[0, 1]:.2f}", "{(index weights 0 1):f2}");
    narration_shape(a, "{weights[0, 1]:.0%} of it", "{(index weights 0 1):%0}| of it");
    narration_shape(a, "best: {tokens[argmax(weights[0])]}", "best: |{(index tokens (call argmax (index weights 0)))}");
    narration_shape(a, "{shape(X)}{d_k}", "{(call shape X)}|{d_k}");
    // A slice's ':' sits inside brackets: it is not a format.
    narration_shape(a, "{sum(X[:, 1])}", "{(call sum (index X (: _ _) 1))}");
    // Doubled braces are literal, around placeholders too.
    narration_shape(a, "{{x}} and {{{x}}}", "{x} and {|{x}|}");
}

static void test_narration_positions(void **state) {
    ExprError err;
    const Narration *n = expr_parse_narration(*state, "a {b + c:.1f} d", &err);
    assert_non_null(n);
    assert_int_equal(n->n_parts, 3);
    assert_int_equal(n->n_placeholders, 1);
    assert_int_equal(n->parts[1].expr_offset, 3);
    assert_string_equal(n->parts[1].expr_text, "b + c");
    assert_int_equal(n->parts[1].expr->op_pos, 2);  // '+' at narration byte 3 + 2
}

// A narration syntax error: message, hint and the byte range under the caret.
static void expect_narration_error(Arena *arena, const char *text, size_t pos, size_t width, const char *message,
                                   const char *hint) {
    ExprError err;
    if (expr_parse_narration(arena, text, &err))
        fail_msg("'%s' parsed", text);
    assert_string_equal(err.message, message);
    assert_int_equal(err.pos, pos);
    assert_int_equal(err.width, width);
    if (hint)
        assert_string_equal(err.hint, hint);
}

static void test_narration_errors(void **state) {
    Arena *a = *state;
    expect_narration_error(a, "sum {x", 4, 1, "this { opens a placeholder that is never closed",
                           "close it with }, or write {{ for a brace in the text");
    expect_narration_error(a, "a } b", 2, 1, "this } closes no placeholder", NULL);
    expect_narration_error(a, "an empty {} here", 9, 2, "this placeholder is empty", NULL);
    expect_narration_error(a, "{x:.2d}", 3, 3, "unknown number format after ':'", NULL);
    expect_narration_error(a, "{x:.13f}", 3, 4, "unknown number format after ':'", NULL);
    expect_narration_error(a, "{x:}", 3, 1, "unknown number format after ':'", NULL);
    // An expression's own error, placed in the narration: the second "@" at byte 9.
    expect_narration_error(a, "see {Q @ @ K}", 9, 1, "expected a value (a name, a number, '(' or '['), found '@'", NULL);
    expect_narration_error(a, "{x:f}", 3, 1, "unknown number format after ':'", NULL);
    expect_narration_error(a, "{x:12f}", 3, 3, "unknown number format after ':'", NULL);
    expect_narration_error(a, "{x:.x2f}", 3, 4, "unknown number format after ':'", NULL);
    expect_narration_error(a, "{x:.123f}", 3, 5, "unknown number format after ':'", NULL);
    // Only the first ':' starts the format; a second one is part of it.
    expect_narration_error(a, "{x:.2f:}", 3, 4, "unknown number format after ':'", NULL);
    // A stray ')' does not end the placeholder; the expression refuses it.
    expect_narration_error(a, "{x)}", 2, 1, "unexpected ')' after a complete expression", "this bracket closes nothing");
    // A '}' inside brackets does not end the placeholder either; the expression refuses it too.
    expect_narration_error(a, "{f(}) + 1}", 3, 1, "'}' cannot appear in an expression", NULL);
    // A '{' inside a placeholder does not nest.
    expect_narration_error(a, "{a {b}}", 0, 1, "this { opens a placeholder that is never closed", NULL);
}

#define ERROR_TEST(name) {"error_" #name, test_syntax_error, NULL, NULL, &case_##name},
#define CASE_TEST(name, ...) ERROR_TEST(name)
#define TEST(f) cmocka_unit_test_setup_teardown(f, make_arena, free_arena)

int main(void) {
    build_long_cases();
    const struct CMUnitTest tests[] = {
        TEST(test_product_binds_tighter_than_sum),
        TEST(test_left_associative),
        TEST(test_matmul_is_a_product),
        TEST(test_floor_divide_and_remainder_are_products),
        TEST(test_logical_precedence),
        TEST(test_power_binds_tighter_than_unary_minus),
        TEST(test_power_takes_a_signed_exponent),
        TEST(test_power_is_right_associative),
        TEST(test_unary_signs),
        TEST(test_parentheses_group),
        TEST(test_transpose),
        TEST(test_dotted_names),
        TEST(test_indexing),
        TEST(test_list_index_and_tensor_index),
        TEST(test_list_literals),
        TEST(test_calls_with_keywords),
        TEST(test_nested_calls),
        TEST(test_whitespace_between_tokens),
        TEST(test_binary_ranges),
        TEST(test_parenthesised_name_keeps_its_token),
        TEST(test_postfix_ranges),
        TEST(test_negation_ranges),
        TEST(test_number_literals),
        TEST(test_minus_folds_into_the_number),
        TEST(test_nesting_at_the_limit),
        TEST(test_long_run_of_unary_plus),
        TEST(test_error_is_reset),
        TEST(test_narration_parts),
        TEST(test_narration_positions),
        TEST(test_narration_errors),
        cmocka_unit_test(test_op_text),
        cmocka_unit_test(test_out_of_memory),
        SYNTAX_CASES(CASE_TEST)
        ERROR_TEST(deep_parens)
        ERROR_TEST(deep_minus)
        ERROR_TEST(deep_power)
        ERROR_TEST(too_many_items)
        ERROR_TEST(tall_list)
        ERROR_TEST(tall_slice)
        ERROR_TEST(tall_sum)
        ERROR_TEST(too_many_indices)
        ERROR_TEST(too_many_arguments)
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

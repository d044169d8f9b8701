// quiz: questions from a traced lesson, and the judging of answers.
#include "quiz.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "format.h"
#include "kernel.h"

void quiz_destroy(Quiz *quiz) {
    if (!quiz)
        return;
    arena_destroy(quiz->arena);
    util_free(quiz);
}

// ---------------------------------------------------------------- which elements

// A step a student can work by hand: an operation (not only moving values about: a transpose
// or an index), with values, and inputs small enough to show whole.
static bool askable(const Plan *plan, const PlanNode *n) {
    if (!n->is_stage || n->stage_kind != STAGE_STEP || n->kind != PLAN_OP || !n->has_values)
        return false;
    size_t size = 0;
    shape_size(&n->shape, &size);
    if (size == 0 || n->op->syntax == OP_POSTFIX || n->op->syntax == OP_INDEXING || n->op->from_shapes_only)
        return false;
    for (size_t k = 0; k < n->n_args; k++) {
        shape_size(&plan->nodes[n->args[k]].shape, &size);
        if (size > QUIZ_MAX_INPUT_VALUES)
            return false;
    }
    return true;
}

size_t quiz_targets(const Plan *plan, uint64_t seed, ExplainTarget *targets, size_t cap, bool *marked) {
    size_t n = 0;
    *marked = plan->n_quizzes > 0;
    if (*marked) {
        // A row is asked element by element.
        for (size_t q = 0; q < plan->n_quizzes; q++) {
            ExplainTarget t = plan->quizzes[q];
            const Shape *s = &plan->nodes[t.node].shape;
            if (t.kind == EXPLAIN_ELEMENT) {
                if (n < cap)
                    targets[n++] = t;
                continue;
            }
            size_t d = s->rank ? s->dim[s->rank - 1] : 1;
            for (size_t j = 0; j < d && n < cap; j++) {
                ExplainTarget e = t;
                e.kind = EXPLAIN_ELEMENT;
                e.index[s->rank ? s->rank - 1 : 0] = j;
                e.n_index = s->rank;
                targets[n++] = e;
            }
        }
        return n;
    }
    size_t steps = 0;
    for (size_t i = 0; i < plan->n_nodes; i++)
        steps += askable(plan, &plan->nodes[i]);
    if (steps == 0)
        return 0;
    // One draw per askable step, from the same splitmix64 generator random givens use.
    Shape draws_shape = {.rank = 1, .dim = {steps}};
    Tensor *draws = tensor_create(&draws_shape);
    if (!draws)
        return SIZE_MAX;
    kernel_fill_random(draws, KERNEL_UNIFORM, 1.0, seed);
    size_t k = 0;
    for (size_t i = 0; i < plan->n_nodes && n < cap; i++) {
        const PlanNode *node = &plan->nodes[i];
        if (!askable(plan, node))
            continue;
        size_t size = 0;
        shape_size(&node->shape, &size);
        double u = (draws->data[k++] + 1.0) / 2.0;  // [0, 1)
        size_t flat = (size_t)(u * (double)size);
        if (flat >= size)
            flat = size - 1;
        ExplainTarget t = {.node = i, .kind = EXPLAIN_ELEMENT, .n_index = node->shape.rank};
        shape_unflatten(&node->shape, flat, t.index);
        targets[n++] = t;
    }
    tensor_destroy(draws);
    return n;
}

// ---------------------------------------------------------------- the questions

// [[1.0000, 2.0000], [3.0000, 4.0000]]: a tensor's values on one line, in the notation the
// trace chooses for the whole tensor.
static void put_nested(StrBuf *sb, const Tensor *t, const FormatStyle *style, size_t axis, size_t *at) {
    if (axis == t->shape.rank) {
        char buf[FORMAT_NUMBER_CAP];
        format_with(style, t->data[(*at)++], buf, sizeof(buf));
        strbuf_puts(sb, buf);
        return;
    }
    strbuf_putc(sb, '[');
    for (size_t i = 0; i < t->shape.dim[axis]; i++) {
        if (i)
            strbuf_puts(sb, ", ");
        put_nested(sb, t, style, axis + 1, at);
    }
    strbuf_putc(sb, ']');
}

// The values an index reads, nested as put_nested writes them: "1, :" of a [3, 4] tensor is its
// row 1, ":, 2" its column 2. Each of the index's parts (at most the tensor's axes; those left
// out are whole) is a whole number below its axis's length or ':'. False, with nothing
// written, for any other index (a range, a negative position): the whole tensor shows instead.
static bool parse_index(const Tensor *t, const char *index, size_t len, long *fixed) {
    size_t axis = 0;
    for (size_t i = 0; i <= len; axis++) {
        size_t end = i;
        while (end < len && index[end] != ',')
            end++;
        size_t a = i, b = end;
        while (a < b && index[a] == ' ')
            a++;
        while (b > a && index[b - 1] == ' ')
            b--;
        if (axis >= t->shape.rank || a == b)
            return false;
        if (b - a == 1 && index[a] == ':') {
            fixed[axis] = -1;
        } else {
            long v = 0;
            for (size_t k = a; k < b; k++) {
                if (!isdigit((unsigned char)index[k]) || v > 1000000)
                    return false;
                v = 10 * v + (index[k] - '0');
            }
            if ((size_t)v >= t->shape.dim[axis])
                return false;
            fixed[axis] = v;
        }
        i = end + 1;
    }
    for (; axis < t->shape.rank; axis++)
        fixed[axis] = -1;
    return true;
}

static void put_slice(StrBuf *sb, const Tensor *t, const FormatStyle *style, const long *fixed, size_t axis,
                      size_t offset) {
    if (axis == t->shape.rank) {
        char buf[FORMAT_NUMBER_CAP];
        format_with(style, t->data[offset], buf, sizeof(buf));
        strbuf_puts(sb, buf);
        return;
    }
    size_t stride = 1;
    for (size_t a = axis + 1; a < t->shape.rank; a++)
        stride *= t->shape.dim[a];
    if (fixed[axis] >= 0) {
        put_slice(sb, t, style, fixed, axis + 1, offset + (size_t)fixed[axis] * stride);
        return;
    }
    strbuf_putc(sb, '[');
    for (size_t i = 0; i < t->shape.dim[axis]; i++) {
        if (i)
            strbuf_puts(sb, ", ");
        put_slice(sb, t, style, fixed, axis + 1, offset + i * stride);
    }
    strbuf_putc(sb, ']');
}

// The first "name[index]" the element's formula reads of an input: its index's text and
// length, or NULL. The name must stand alone ("X[" in "X[1, :]", not in "dX[").
static const char *index_read(const char *formula, const char *name, size_t *len) {
    const char *rhs = formula ? strstr(formula, " = ") : NULL;
    size_t n = strlen(name);
    for (const char *p = rhs ? strstr(rhs, name) : NULL; p; p = strstr(p + 1, name)) {
        bool alone = !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.');
        const char *close = p[n] == '[' ? strchr(p + n, ']') : NULL;
        if (alone && close) {
            *len = (size_t)(close - (p + n + 1));
            return p + n + 1;
        }
    }
    return NULL;
}

// "Q = [[...]]" for each tensor input, or only the part the element reads, "X[1, :] = [...]",
// when the element's formula names it; a number written in the formula needs no line.
static bool add_inputs(Quiz *quiz, const Plan *plan, const Trace *trace, const PlanNode *n, QuizQuestion *q) {
    q->inputs = arena_array(quiz->arena, n->n_args ? n->n_args : 1, sizeof(char *));
    if (!q->inputs)
        return false;
    for (size_t k = 0; k < n->n_args; k++) {
        const PlanNode *in = &plan->nodes[n->args[k]];
        const Tensor *t = trace->tensors[n->args[k]];
        if (in->kind == PLAN_CONSTANT && in->shape.rank == 0)
            continue;
        StrBuf sb;
        strbuf_init(&sb);
        size_t at = 0, len = 0;
        long fixed[TENSOR_MAX_RANK];
        const char *index = index_read(q->formula, in->display, &len);
        FormatStyle style = format_style(t->data, t->size, trace->digits, t->is_count);
        size_t read = 1;  // the values the index reads
        bool indexed = index && parse_index(t, index, len, fixed);
        for (size_t a = 0; indexed && a < t->shape.rank; a++)
            read *= fixed[a] < 0 ? t->shape.dim[a] : 1;
        if (indexed && read > QUIZ_MAX_INPUT_VALUES) {
            strbuf_printf(&sb, "%s[%.*s] = %zu values (see the trace for them)", in->display, (int)len, index, read);
        } else if (indexed) {
            strbuf_printf(&sb, "%s[%.*s] = ", in->display, (int)len, index);
            put_slice(&sb, t, &style, fixed, 0, 0);
        } else if (t->size > QUIZ_MAX_INPUT_VALUES) {
            char shape[64];
            shape_format(&t->shape, shape, sizeof(shape));
            strbuf_printf(&sb, "%s = a %s tensor (see the trace for its values)", in->display, shape);
        } else {
            strbuf_printf(&sb, "%s = ", in->display);
            put_nested(&sb, t, &style, 0, &at);
        }
        const char *line = sb.failed ? NULL : arena_strdup(quiz->arena, strbuf_str(&sb));
        strbuf_finish(&sb);
        if (!line)
            return false;
        q->inputs[q->n_inputs++] = line;
    }
    return true;
}

// The length of the work's first line up to its second " = ": "scores[0, 1] = Q[0] · K.T[:, 1]",
// the element's formula without its numbers; 0 when the line is not written that way.
static size_t formula_length(const char *work) {
    const char *first = strstr(work, " = ");
    const char *second = first ? strstr(first + 3, " = ") : NULL;
    return second ? (size_t)(second - work) : 0;
}

static bool add_question(Quiz *quiz, const Plan *plan, const Trace *trace, const TraceStage *s,
                         const ExplainTarget *t, const char *const *work, size_t n_work, bool marked) {
    const PlanNode *n = &plan->nodes[t->node];
    if (!marked && n_work != 1)
        return true;  // more than one line of work: left out of a seeded choice
    QuizQuestion *q = &quiz->questions[quiz->n];
    memset(q, 0, sizeof(*q));
    const Tensor *value = s->value;
    size_t flat = shape_flatten(&value->shape, t->index);
    StrBuf asked;
    strbuf_init(&asked);
    strbuf_puts(&asked, s->name);
    if (value->shape.rank) {
        strbuf_putc(&asked, '[');
        for (size_t i = 0; i < value->shape.rank; i++)
            strbuf_printf(&asked, "%s%zu", i ? ", " : "", t->index[i]);
        strbuf_putc(&asked, ']');
    }
    // The value as the trace prints it in its tensor, and half a unit of its last printed digit.
    FormatStyle style = format_style(value->data, value->size, trace->digits, value->is_count);
    char printed[FORMAT_NUMBER_CAP];
    double v = value->data[flat];
    format_with(&style, v, printed, sizeof(printed));
    int last = style.notation == FORMAT_WHOLE ? 0 : -style.decimals;  // the last digit's power of ten
    if (style.notation == FORMAT_SCIENTIFIC && v != 0 && isfinite(v))
        last += (int)floor(log10(fabs(v)));
    q->half_unit = 0.5 * pow(10.0, last);
    q->digits = last < 0 ? -last : 0;
    StrBuf text;
    strbuf_init(&text);
    strbuf_puts(&text, printed);
    q->asked = asked.failed ? NULL : arena_strdup(quiz->arena, strbuf_str(&asked));
    q->value_text = text.failed ? NULL : arena_strdup(quiz->arena, strbuf_str(&text));
    strbuf_finish(&asked);
    strbuf_finish(&text);
    q->stage = s->kind == STAGE_STEP ? arena_printf(quiz->arena, "Step %s  %s = %s", s->number, s->name, s->expr)
                                     : arena_printf(quiz->arena, "%s = %s", s->name, s->expr);
    q->value = value->data[flat];
    q->op = n->op->name;
    size_t formula = n_work == 1 ? formula_length(work[0]) : 0;
    if (formula && !(q->formula = arena_strndup(quiz->arena, work[0], formula)))
        return false;
    q->work = arena_array(quiz->arena, n_work ? n_work : 1, sizeof(char *));
    if (!q->asked || !q->value_text || !q->stage || !q->work)
        return false;
    // The quiz outlives the trace: it keeps copies.
    for (size_t i = 0; i < n_work; i++)
        if (!(q->work[i] = arena_strdup(quiz->arena, work[i])))
            return false;
    q->n_work = n_work;
    if (!add_inputs(quiz, plan, trace, n, q))
        return false;
    quiz->n++;
    return true;
}

Quiz *quiz_create(const Plan *plan, const Trace *trace, const ExplainTarget *targets, size_t n, bool marked,
                  Diag *diag) {
    Quiz *quiz = util_calloc(1, sizeof(Quiz));
    if (!quiz || !(quiz->arena = arena_create()) ||
        !(quiz->questions = arena_array(quiz->arena, n ? n : 1, sizeof(QuizQuestion))))
        goto oom;
    if (!(quiz->title = arena_strdup(quiz->arena, trace->title)))
        goto oom;
    size_t most = marked ? n : QUIZ_MAX_QUESTIONS;
    // Each stage's work holds the lines of its targets in the order they were asked; one
    // element's work is a run of lines, told apart by counting targets per stage.
    for (size_t si = 0; si < trace->n_stages; si++) {
        const TraceStage *s = &trace->stages[si];
        size_t line = 0;
        size_t here = 0;
        for (size_t k = 0; k < n; k++)
            here += targets[k].node == s->node;
        if (here == 0)
            continue;
        // Lines per target: the same operation writes the same number of lines for each element.
        size_t per = s->n_work / here;
        for (size_t k = 0; k < n && quiz->n < most; k++) {
            if (targets[k].node != s->node || plan->nodes[s->node].kind != PLAN_OP)
                continue;  // (the checker refuses quiz: where nothing is computed)
            if (!add_question(quiz, plan, trace, s, &targets[k], s->work + line, per, marked))
                goto oom;
            line += per;
        }
    }
    return quiz;
oom:
    diag_out_of_memory(diag);
    quiz_destroy(quiz);
    return NULL;
}

// ---------------------------------------------------------------- answers

// An exponent past this says nothing more: 1e-400 is already 0 and 1e400 infinite.
#define QUIZ_MAX_EXPONENT 100000

// An answer written as a person writes a number: [+-]digits[.digits][(e|E)[+-]digits], or
// inf, infinity or nan (any case, signed), and nothing else (no hexadecimal, no nan(...)).
// Fills *typed with the decimal place of its last digit ("0.35" 2, "3" 0, "1e-3" 3,
// "5e300" -300). false when it is not such a number.
static bool read_number(const char *s, double *x, int *typed) {
    const char *p = s + (*s == '+' || *s == '-');
    *typed = 0;
    if (strcasecmp(p, "inf") == 0 || strcasecmp(p, "infinity") == 0 || strcasecmp(p, "nan") == 0) {
        *x = strtod(s, NULL);
        return true;
    }
    size_t whole = strspn(p, "0123456789"), decimals = 0;
    p += whole;
    if (*p == '.') {
        decimals = strspn(p + 1, "0123456789");
        p += 1 + decimals;
    }
    if (whole + decimals == 0)
        return false;
    long exponent = 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        bool negative = *p == '-';
        p += *p == '+' || *p == '-';
        size_t n = strspn(p, "0123456789");
        if (n == 0)
            return false;
        for (size_t i = 0; i < n; i++)
            if (exponent < QUIZ_MAX_EXPONENT)
                exponent = exponent * 10 + (p[i] - '0');
        p += n;
        exponent = negative ? -exponent : exponent;
    }
    if (*p)
        return false;
    // at most QUIZ_ANSWER_MAX decimals, and an exponent below QUIZ_MAX_EXPONENT * 10: an int
    *typed = (int)((long)decimals - exponent);
    *x = strtod(s, NULL);
    return true;
}

// "2,362,368" as the trace prints counts: the commas dropped when they group thousands, so
// that a student may answer as the numbers are shown. Returns false when they do not.
static bool drop_thousands(const char *s, char *buf, size_t cap) {
    size_t n = 0, run = 0;
    bool grouped = false;
    const char *p = s;
    if (*p == '-')
        buf[n++] = *p++;
    for (; *p && *p != '.' && !isspace((unsigned char)*p); p++) {
        if (*p == ',') {
            // The first group has 1 to 3 digits, every later one exactly 3.
            if (run == 0 || run > 3 || (grouped && run != 3))
                return false;
            grouped = true;
            run = 0;
        } else if (isdigit((unsigned char)*p) && n + 1 < cap) {
            buf[n++] = *p;
            run++;
        } else {
            return false;
        }
    }
    // What follows (decimals, spaces, anything else) is left for read_number to judge.
    size_t len = strlen(p);
    if (!grouped || run != 3 || n + len + 1 > cap)
        return false;
    memcpy(buf + n, p, len + 1);
    return true;
}

void quiz_judge(const QuizQuestion *q, const char *answer, QuizVerdict *v) {
    memset(v, 0, sizeof(*v));
    while (isspace((unsigned char)*answer))
        answer++;
    char plain[QUIZ_ANSWER_MAX + 1];
    size_t len = strlen(answer);
    while (len && isspace((unsigned char)answer[len - 1]))
        len--;
    if (len > QUIZ_ANSWER_MAX)
        return;  // not read as a number: cutting it would judge another one
    memcpy(plain, answer, len);
    plain[len] = '\0';
    char grouped[QUIZ_ANSWER_MAX + 1];
    if (strchr(plain, ',') && drop_thousands(plain, grouped, sizeof(grouped)))
        strcpy(plain, grouped);
    answer = plain;
    double x;
    int typed;
    v->number = read_number(answer, &x, &typed);
    if (!v->number)
        return;
    if (isnan(q->value) || isinf(q->value) || isnan(x) || isinf(x)) {
        v->right = (isnan(q->value) && isnan(x)) || x == q->value;
        return;
    }
    // Half a unit of the last printed decimal, widened a hair so that 0.35 for 0.345 (printed
    // 0.3450) is judged as a person would, not by the binary form of 0.005.
    double printed = q->half_unit * (1 + 1e-9);
    // A zero ("0", "0.0") says nothing about its precision: it is judged at the printed digits,
    // or "0" would be right for every value below a half.
    bool significant = strcspn(answer, "123456789") < strcspn(answer, "eE");
    double typed_half = 0.5 * pow(10.0, -typed) * (1 + 1e-9);
    // An answer with fewer decimals than the trace prints is judged at the decimals typed, but
    // it must carry two significant figures of the value: 0.2 is not 0.17, nor 3 2.5.
    double two_figures = q->value != 0 ? 0.5 * pow(10.0, floor(log10(fabs(q->value))) - 1) * (1 + 1e-9) : printed;
    if (typed_half > two_figures)
        typed_half = two_figures;
    double loose = significant && typed_half > printed ? typed_half : printed;
    double gap = fabs(x - q->value);
    v->right = gap <= printed || gap <= loose;
    if (!v->right || gap <= printed)
        return;
    // (Right only by the typed precision: typed_half > printed, so digits were typed only
    // when the trace prints more of them.)
    if (typed > 0)
        snprintf(v->note, sizeof(v->note), "right to the %d decimal%s you gave; to %d it is %s", typed,
                 typed == 1 ? "" : "s", q->digits, q->value_text);
    else
        snprintf(v->note, sizeof(v->note), "right to the precision you gave; the trace prints %s", q->value_text);
}

// Tests of the runner's freeing: which node reads each value last (plan_last_readers), which
// values a run keeps, which stages it reads in place instead of copying (heads and their
// transpose, with the same bits and notes), and, on every lesson given on the command line,
// that the text trace is byte for byte the same whether the values nothing prints are freed
// (and read in place) or kept.
#include "backend.h"
#include "fast_layer.h"
#include "schedule.h"
#include "trace_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char **lesson_paths;

// Freeing and reading in place are the fast layer's (its schedule, schedule.h): the reference
// build computes every node into a tensor of its own and keeps every value, and skips a test
// of them.
static void needs_the_fast_schedule(void) {
    if (!schedule_installed())
        skip();
}
static size_t n_lesson_paths;

static size_t node_of(const Plan *plan, const char *name) {
    size_t i = 0;
    if (!plan_find_stage(plan, name, &i))
        fail_msg("no stage '%s'", name);
    return i;
}

// a, b -> c = a + b -> d = c * 2 -> e = d + a: b is last read by c, a by e, c by d.
static const char *const CHAIN = "title: t\n"
                                 "given:\n"
                                 "  a: [1, 2]\n"
                                 "  b: [3, 4]\n"
                                 "steps:\n"
                                 "  - c: a + b\n"
                                 "  - d: c * 2\n"
                                 "  - e: d + a\n";

static void test_last_readers_of_a_chain(void **state) {
    Fixture *f = *state;
    const Plan *plan = fixture_plan(f, "t.yaml", CHAIN);
    size_t *last = calloc(plan->n_nodes, sizeof(size_t));
    assert_non_null(last);
    assert_true(plan_last_readers(plan, last));
    size_t a = node_of(plan, "a"), b = node_of(plan, "b"), c = node_of(plan, "c"), d = node_of(plan, "d"),
           e = node_of(plan, "e");
    assert_int_equal(last[a], e);
    assert_int_equal(last[b], c);
    assert_int_equal(last[c], d);
    assert_int_equal(last[d], e);
    assert_int_equal(last[e], e);  // nothing reads the last stage: its own node
    free(last);
}

// x, y -> u = y * 3, s = sum(x * x), g = ds/dx = 2x, after = g + 1.
static const char *const GRADIENT = "title: t\n"
                                    "given:\n"
                                    "  x: [1.0, 2.0]\n"
                                    "  y: [3.0, 4.0]\n"
                                    "steps:\n"
                                    "  - u: y * 3\n"
                                    "  - s: sum(x * x)\n"
                                    "  - g: grad(s, x)\n"
                                    "  - after: g + 1\n";

// A gradient reads the gradients it gathers, its uses and their inputs, and a gradient stage
// what its finite-difference check reads: x, y, and the inputs of what moves with x. Nothing
// else lives on for it: u, read by nothing, goes at once.
static void test_last_readers_of_a_gradient(void **state) {
    Fixture *f = *state;
    const Plan *plan = fixture_plan(f, "t.yaml", GRADIENT);
    size_t *last = calloc(plan->n_nodes, sizeof(size_t));
    assert_non_null(last);
    assert_true(plan_last_readers(plan, last));
    // grad(s, x) is the backward pass's ds/ds.1 (through the sum) and then ds/dx (through
    // x * x, called s.1), then g, a copy of it
    size_t through_sum = node_of(plan, "ds/ds.1"), grad = node_of(plan, "ds/dx"), g = node_of(plan, "g"),
           after = node_of(plan, "after");
    assert_int_equal(plan->nodes[grad].kind, PLAN_GRAD);
    assert_int_equal(last[node_of(plan, "u")], node_of(plan, "u"));
    assert_int_equal(last[node_of(plan, "y")], node_of(plan, "u"));
    // ds/dx passes back through s.1 = x * x (its use, with x its input) and its check
    // measures s (y) with x (x) moved
    assert_int_equal(last[node_of(plan, "x")], grad);
    assert_int_equal(last[node_of(plan, "s.1")], grad);
    assert_int_equal(last[node_of(plan, "s")], grad);
    assert_int_equal(last[through_sum], grad);
    assert_int_equal(last[grad], g);
    assert_int_equal(last[g], after);
    assert_int_equal(last[after], after);
    free(last);
}

// w, x -> h0 = -x -> h1 = h0 * w -> ... -> h3000 = h2999 * w, g = grad(h3000, x). Nodes: w 0,
// x 1, h0 2, hk k + 2; the backward pass's stages dh3000/dh2999, ..., dh3000/dh0, dh3000/dx.
// Following the check of dh3000/dhk from hk to h3000 takes 3002 - (k + 2) + 1 = 3001 - k steps,
// and dh3000/dx's 3002: 2 + 3 + ... + 3001 + 3002 = 4,507,502 in all, past the 2^22 =
// 4,194,304 plan_last_readers follows. So dh3000/dx, the last of them, is taken to read every
// node before it: w (node 0, which its check reads to compute h1 again, and which the pass
// itself reads last in dh3000/dh0) and h1 (read last by dh3000/dh1 and dh3000/dh0) live until
// it, as do x and h3000, which it reads itself.
static void test_last_readers_past_the_work_followed(void **state) {
    Fixture *f = *state;
    StrBuf yaml;
    strbuf_init(&yaml);
    strbuf_puts(&yaml, "title: t\ngiven:\n  w: 1.0\n  x: 1.0\nsteps:\n  - h0: -x\n");
    for (int k = 1; k <= 3000; k++)
        strbuf_printf(&yaml, "  - h%d: h%d * w\n", k, k - 1);
    strbuf_puts(&yaml, "  - g: grad(h3000, x)\n");
    assert_false(yaml.failed);
    const Plan *plan = fixture_plan(f, "t.yaml", strbuf_str(&yaml));
    size_t *last = calloc(plan->n_nodes, sizeof(size_t));
    assert_non_null(last);
    assert_true(plan_last_readers(plan, last));
    size_t w = node_of(plan, "w"), x = node_of(plan, "x"), h1 = node_of(plan, "h1"),
           y = node_of(plan, "h3000"), through_h0 = node_of(plan, "dh3000/dh0"), dx = node_of(plan, "dh3000/dx");
    assert_int_equal(w, 0);
    assert_int_equal(h1, 3);
    assert_int_equal(y, 3002);
    assert_int_equal(plan->nodes[dx].kind, PLAN_GRAD);
    assert_true(through_h0 < dx);
    assert_int_equal(last[w], dx);
    assert_int_equal(last[h1], dx);
    assert_int_equal(last[x], dx);
    assert_int_equal(last[y], dx);
    free(last);
    strbuf_finish(&yaml);
}

// The lesson yaml run keeping only the stage `name` (*node): every other stage is released,
// and holds no values, that one keeps them.
static const Trace *run_keeping_only(Fixture *f, const char *yaml, const char *name, size_t *node) {
    needs_the_fast_schedule();
    const Plan *plan = fixture_plan(f, "t.yaml", yaml);
    bool *keep = calloc(plan->n_nodes, sizeof(bool));
    assert_non_null(keep);
    *node = node_of(plan, name);
    keep[*node] = true;
    f->trace = run_plan(plan, 4, NULL, 0, keep, &f->diag);
    free(keep);
    assert_non_null(f->trace);
    const Trace *t = f->trace;
    for (size_t i = 0; i < t->n_stages; i++) {
        const TraceStage *s = &t->stages[i];
        bool last = s->node == *node;
        if (s->released == last || (s->value->data == NULL) != !last)
            fail_msg("stage %s: released %d, values %s", s->name, s->released, s->value->data ? "kept" : "freed");
    }
    return t;
}

// Keeping only e: every other value is freed (its stage released, its shape kept), e holds
// (1 + 3) * 2 + 1 = 9 and (2 + 4) * 2 + 2 = 14.
static void test_run_frees_what_is_not_kept(void **state) {
    size_t e;
    const Trace *t = run_keeping_only(*state, CHAIN, "e", &e);
    for (size_t i = 0; i < t->n_stages; i++) {
        assert_int_equal(t->stages[i].value->shape.rank, 1);
        assert_int_equal(t->stages[i].value->shape.dim[0], 2);
    }
    assert_double_equal(t->tensors[e]->data[0], 9.0, 0.0);
    assert_double_equal(t->tensors[e]->data[1], 14.0, 0.0);
}

// Keeping only after: the backward pass's stages are freed as well as the forward pass's, once
// their last reader has run; after holds 2 * 1 + 1 = 3 and 2 * 2 + 1 = 5.
static void test_run_frees_gradient_stages(void **state) {
    size_t after;
    const Trace *t = run_keeping_only(*state, GRADIENT, "after", &after);
    assert_int_equal(t->tensors[after]->size, 2);
    assert_double_equal(t->tensors[after]->data[0], 3.0, 0.0);
    assert_double_equal(t->tensors[after]->data[1], 5.0, 0.0);
}

// Without a keep list nothing is freed.
static void test_run_keeps_everything_by_default(void **state) {
    Fixture *f = *state;
    fixture_plan(f, "t.yaml", CHAIN);
    const Trace *t = fixture_trace(f, NULL, 0);
    for (size_t i = 0; i < t->n_stages; i++)
        if (t->stages[i].released || !t->stages[i].value->data)
            fail_msg("stage %s was freed", t->stages[i].name);
}

// A step that only names a grad() is marked, so that the page shows its backward pass and
// not a copy; a step that does more with the gradient, or names another value, is not.
static void test_a_step_naming_a_gradient_is_marked(void **state) {
    Fixture *f = *state;
    fixture_plan(f, "t.yaml",
                 "title: t\ngiven:\n  x: [1.0, 2.0]\nsteps:\n  - s: sum(x * x)\n  - g: grad(s, x)\n"
                 "  - h: -grad(s, x)\n  - y: x\n");
    const Trace *t = fixture_trace(f, NULL, 0);
    size_t marked = 0;
    for (size_t i = 0; i < t->n_stages; i++) {
        const TraceStage *st = &t->stages[i];
        bool want = !strcmp(st->name, "g");
        if (st->names_gradient != want)
            fail_msg("stage %s: names_gradient is %d", st->name, st->names_gradient);
        marked += st->names_gradient;
    }
    assert_int_equal(marked, 1);
}

// A softmax along the last axis makes each row a distribution (the page draws it so); along
// axis 0 each column is one, and the rows are not.
static void test_only_a_last_axis_softmax_is_a_row_distribution(void **state) {
    Fixture *f = *state;
    fixture_plan(f, "t.yaml",
                 "title: t\ngiven:\n  x: [[1.0, 2.0], [3.0, 5.0]]\nsteps:\n  - by_row: softmax(x)\n"
                 "  - last: softmax(x, axis=-1)\n  - columns: softmax(x, axis=0)\n");
    const Trace *t = fixture_trace(f, NULL, 0);
    for (size_t i = 0; i < t->n_stages; i++) {
        const TraceStage *st = &t->stages[i];
        bool want = !strcmp(st->name, "by_row") || !strcmp(st->name, "last");
        if (st->distribution != want)
            fail_msg("stage %s: distribution is %d", st->name, st->distribution);
    }
}

// A weight file cut short after the lesson was checked (numpy.save writing it again while the
// lesson runs): its values are read when the given is computed, and the run ends in an error
// located at the given's file:, never in a signal (SIGBUS, reading a mapping past its end).
static void test_a_weight_file_cut_short_is_an_error(void **state) {
    Fixture *f = *state;
    char folder[] = "/tmp/test_run_XXXXXX";
    assert_non_null(mkdtemp(folder));
    char npy_path[64], lesson_path[64];
    snprintf(npy_path, sizeof(npy_path), "%s/w.npy", folder);
    snprintf(lesson_path, sizeof(lesson_path), "%s/t.yaml", folder);
    // 4,096 doubles 0, 1, ...: an .npy file of version 1, its header padded to 118 bytes
    enum { N = 4096 };
    static double values[N];
    for (size_t i = 0; i < N; i++)
        values[i] = (double)i;
    char header[128];
    int h = snprintf(header, sizeof(header), "{'descr': '<f8', 'fortran_order': False, 'shape': (%d,), }", N);
    memset(header + h, ' ', (size_t)(117 - h));
    header[117] = '\n';
    FILE *w = fopen(npy_path, "wb");
    assert_non_null(w);
    unsigned char magic[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 118, 0};
    assert_int_equal(fwrite(magic, 1, 10, w), 10);
    assert_int_equal(fwrite(header, 1, 118, w), 118);
    assert_int_equal(fwrite(values, sizeof(double), N, w), N);
    assert_int_equal(fclose(w), 0);
    fixture_plan(f, lesson_path, "title: t\ngiven:\n  W: {file: w.npy}\nsteps:\n  - s: sum(W)\n");
    assert_int_equal(truncate(npy_path, 128 + 8 * 100), 0);
    f->trace = run_plan(f->plan, 4, NULL, 0, NULL, &f->diag);
    assert_null(f->trace);
    assert_int_equal(f->diag.status, STATUS_USAGE_ERROR);
    assert_int_equal(f->diag.line, 3);
    assert_int_equal(f->diag.col, 13);
    assert_string_equal(f->diag.message,
                        "cannot read 'w.npy': it is now shorter than when it was opened: it changed while it was read");
    assert_string_equal(f->diag.hint, "another program may be writing the file (numpy.save, a download): wait "
                                      "until it is done, then run the lesson again");
    unlink(npy_path);
    rmdir(folder);
}

// ---------------------------------------------------------------- values held at once

// CHAIN's nodes in order, with the values each holds: a 2, b 2, c 2, the constant 2 of
// `c * 2` 1, d 2, e 2.
static void expect_chain_order(const Plan *plan) {
    assert_int_equal(plan->n_nodes, 6);
    assert_int_equal(node_of(plan, "a"), 0);
    assert_int_equal(node_of(plan, "b"), 1);
    assert_int_equal(node_of(plan, "c"), 2);
    assert_int_equal(plan->nodes[3].kind, PLAN_CONSTANT);
    assert_int_equal(node_of(plan, "d"), 4);
    assert_int_equal(node_of(plan, "e"), 5);
}

#define NEVER SIZE_MAX  // the limit is never passed (past_held then stays 0)

// plan_held_values with keep, base and limit gives exactly want.
static void expect_held(const Plan *plan, const bool *keep, size_t base, size_t limit, PlanHeld want) {
    PlanHeld held;
    assert_true(plan_held_values(plan, keep, base, limit, &held));
    if (held.peak != want.peak || held.end != want.end || held.past != want.past ||
        held.past_held != want.past_held)
        fail_msg("base %zu, limit %zu: peak %zu, end %zu, past at node %zu holding %zu; expected %zu, %zu, %zu, %zu",
                 base, limit, held.peak, held.end, held.past, held.past_held, want.peak, want.end, want.past,
                 want.past_held);
}

// Every value kept: the held total only grows, 2, 4, 6, 7, 9, 11, and passes 8 at d.
static void test_held_values_all_kept(void **state) {
    Fixture *f = *state;
    const Plan *plan = fixture_plan(f, "t.yaml", CHAIN);
    expect_chain_order(plan);
    expect_held(plan, NULL, 0, 8, (PlanHeld){.peak = 11, .end = 11, .past = 4, .past_held = 9});
    // a limit the peak reaches but does not pass
    expect_held(plan, NULL, 0, 11, (PlanHeld){.peak = 11, .end = 11, .past = NEVER});
    // keeping every node by name is the same as keeping them all
    bool keep[6] = {true, true, true, true, true, true};
    expect_held(plan, keep, 0, 10, (PlanHeld){.peak = 11, .end = 11, .past = 5, .past_held = 11});
}

// Keeping only e: b goes after c, c and the constant after d, a and d after e. Held after each
// node runs (before its frees): a 2, b 4, c 6 (b goes: 4), 2 5, d 7 (c, 2 go: 4), e 6 (a, d go:
// 2). The peak is 7 of the 11 values the lesson makes, at d.
static void test_held_values_freed_after_their_last_reader(void **state) {
    Fixture *f = *state;
    const Plan *plan = fixture_plan(f, "t.yaml", CHAIN);
    expect_chain_order(plan);
    bool keep[6] = {[5] = true};
    expect_held(plan, keep, 0, 6, (PlanHeld){.peak = 7, .end = 2, .past = 4, .past_held = 7});
    expect_held(plan, keep, 0, 7, (PlanHeld){.peak = 7, .end = 2, .past = NEVER});
    // Keeping nothing: e too goes once it has run, and nothing is left.
    bool none[6] = {false};
    expect_held(plan, none, 0, SIZE_MAX, (PlanHeld){.peak = 7, .end = 0, .past = NEVER});
}

// Values held elsewhere (--diff's first lesson) count from the start: 10 + 2, ..., 10 + 11.
static void test_held_values_on_top_of_a_base(void **state) {
    Fixture *f = *state;
    const Plan *plan = fixture_plan(f, "t.yaml", CHAIN);
    expect_held(plan, NULL, 10, 20, (PlanHeld){.peak = 21, .end = 21, .past = 5, .past_held = 21});
    // a base already past the limit passes it at the first node
    expect_held(plan, NULL, 30, 20, (PlanHeld){.peak = 41, .end = 41, .past = 0, .past_held = 32});
}

// A shape-only given and what is computed from it hold nothing: x 3, the constant 2 1, y 3.
static void test_held_values_of_shapes_alone(void **state) {
    Fixture *f = *state;
    const Plan *plan = fixture_plan(f, "t.yaml",
                                    "title: t\n"
                                    "given:\n"
                                    "  W: {shape: [1000, 1000]}\n"
                                    "  x: [1, 2, 3]\n"
                                    "steps:\n"
                                    "  - p: W.T\n"
                                    "  - y: x * 2\n");
    assert_false(plan->nodes[node_of(plan, "p")].has_values);
    expect_held(plan, NULL, 0, SIZE_MAX, (PlanHeld){.peak = 7, .end = 7, .past = NEVER});
}

// CHAIN through the whole pipeline with 72 bytes of memory, 90% of which is room for 8 values.
static int run_chain_in_72_bytes(Fixture *f, PipelineOptions opts) {
    fixture_release(f);
    opts.digits = -1;
    opts.memory = 72;
    return pipeline_run_bytes("t.yaml", CHAIN, strlen(CHAIN), &opts, &f->out, &f->diag);
}

static void expect_refused_at_d(const Fixture *f, const char *whose, const char *hint) {
    char message[256];
    snprintf(message, sizeof(message),
             "at this step the lesson would hold 72 bytes of values at once, more than 90%% of the 72 bytes %s", whose);
    assert_int_equal(f->diag.status, STATUS_LESSON_ERROR);
    assert_int_equal(f->diag.line, 7);  // "  - d: c * 2": the step's expression
    assert_int_equal(f->diag.col, 8);
    assert_string_equal(f->diag.message, message);
    assert_string_equal(f->diag.hint, hint);
    assert_int_equal(f->out.len, 0);
}

// The whole text trace prints every stage, so it keeps them all; only the constant 2 goes,
// after d: held 2, 4, 6, 7, then 9 at d, past the 8 there is room for. --only e frees as it
// goes and holds 7 at most: it runs. JSON and --save keep every value: refused at d as well.
static void test_pipeline_refuses_a_lesson_past_its_memory(void **state) {
    needs_the_fast_schedule();
    Fixture *f = *state;
    const char *smaller = "use smaller shapes (a smaller n, or smaller givens)";
    char hint[256];
    assert_int_equal(run_chain_in_72_bytes(f, (PipelineOptions){.memory_from = PIPELINE_MEMORY_MACHINE}),
                     STATUS_LESSON_ERROR);
    snprintf(hint, sizeof(hint), "%s; --only or --brief print less, and so hold less at once", smaller);
    expect_refused_at_d(f, "this machine has", hint);
    assert_int_equal(run_chain_in_72_bytes(f, (PipelineOptions){.only = "e"}), STATUS_OK);
    fixture_expect_output(f, "e = d + a");
    snprintf(hint, sizeof(hint), "%s; the text trace without --save frees the values it does not print", smaller);
    assert_int_equal(
        run_chain_in_72_bytes(f, (PipelineOptions){.format = OUTPUT_JSON, .memory_from = PIPELINE_MEMORY_CONTAINER}),
        STATUS_LESSON_ERROR);
    expect_refused_at_d(f, "this container may use", hint);
    assert_int_equal(run_chain_in_72_bytes(f, (PipelineOptions){.only = "e", .save_dir = "/nonexistent/saved"}),
                     STATUS_LESSON_ERROR);
    expect_refused_at_d(f, "this machine has", hint);
}

// The reference, with no schedule installed: whatever keep says, every value is kept and every
// node computed into a tensor of its own, and --only e no longer fits in 72 bytes (held 2, 4,
// 6, 7, then 9 at d, as the whole trace), refused with no word of printing less.
static void test_the_reference_keeps_every_value(void **state) {
    Fixture *f = *state;
    const Schedule *fast = schedule_installed();
    schedule_install(NULL);
    const Plan *plan = fixture_plan(f, "t.yaml", CHAIN);
    bool *keep = calloc(plan->n_nodes, sizeof(bool));
    assert_non_null(keep);
    keep[node_of(plan, "e")] = true;
    f->trace = run_plan(plan, 4, NULL, 0, keep, &f->diag);
    free(keep);
    assert_non_null(f->trace);
    for (size_t i = 0; i < f->trace->n_stages; i++)
        if (f->trace->stages[i].released || !f->trace->stages[i].value->data)
            fail_msg("stage %s was freed", f->trace->stages[i].name);
    assert_int_equal(f->trace->n_in_place, 0);
    int status = run_chain_in_72_bytes(f, (PipelineOptions){.only = "e"});
    schedule_install(fast);
    assert_int_equal(status, STATUS_LESSON_ERROR);
    expect_refused_at_d(f, "this machine has", "use smaller shapes (a smaller n, or smaller givens)");
}

// ---------------------------------------------------------------- read in place

// Two heads over three tokens, the block's attention in small, on X / D (both yaml text).
static char *heads_lesson(const char *x, const char *d) {
    static char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "title: t\n"
             "given:\n"
             "  X: %s\n"
             "  D: %s\n"
             "  W_Q: {shape: [4, 4], init: random, seed: 1}\n"
             "  W_K: {shape: [4, 4], init: random, seed: 2}\n"
             "  W_V: {shape: [4, 4], init: random, seed: 3}\n"
             "  W_O: {shape: [4, 4], init: random, seed: 4}\n"
             "steps:\n"
             "  - x: X / D\n"
             "  - Q_heads: split_heads(x @ W_Q, 2)\n"
             "  - K_heads: split_heads(x @ W_K, 2)\n"
             "  - V_heads: split_heads(x @ W_V, 2)\n"
             "  - scores: Q_heads @ K_heads.T / sqrt(2)\n"
             "  - weights: softmax(scores)\n"
             "  - heads_out: weights @ V_heads\n"
             "  - merged: merge_heads(heads_out)\n"
             "  - out: merged @ W_O\n",
             x, d);
    return yaml;
}

// Run the lesson in f keeping only `out` (and what extra explains), then keeping everything;
// the same bits in out and the same notes on every stage either way. Gives how many stages
// the first run read in place.
static size_t in_place_and_copied(Fixture *f, const ExplainTarget *extra, size_t n_extra) {
    needs_the_fast_schedule();
    const Plan *plan = f->plan;
    bool *keep = calloc(plan->n_nodes, sizeof(bool));
    assert_non_null(keep);
    size_t out = node_of(plan, "out");
    keep[out] = true;
    Trace *in_place = run_plan(plan, 4, extra, n_extra, keep, &f->diag);
    free(keep);
    assert_non_null(in_place);
    f->trace = run_plan(plan, 4, extra, n_extra, NULL, &f->diag);
    assert_non_null(f->trace);
    assert_int_equal(f->trace->n_in_place, 0);  // every value kept: nothing read in place
    const Tensor *a = in_place->tensors[out], *b = f->trace->tensors[out];
    assert_int_equal(a->size, b->size);
    assert_memory_equal(a->data, b->data, a->size * sizeof(double));
    assert_int_equal(in_place->n_stages, f->trace->n_stages);
    for (size_t i = 0; i < in_place->n_stages; i++) {
        const TraceStage *s = &in_place->stages[i], *t = &f->trace->stages[i];
        assert_int_equal(s->n_notes, t->n_notes);
        for (size_t k = 0; k < s->n_notes; k++)
            assert_string_equal(s->notes[k], t->notes[k]);
        assert_int_equal(s->n_work, t->n_work);
        for (size_t k = 0; k < s->n_work; k++)
            assert_string_equal(s->work[k], t->work[k]);
        // every stage but out was released: a view, a product written ahead, or freed
        assert_true(s->released == (s->node != out));
    }
    size_t n = in_place->n_in_place;
    trace_destroy(in_place);
    return n;
}

// Printing only the output, Q_heads, K_heads, K_heads.T and V_heads are views, and heads_out
// is written straight into merged: five stages read in place, with the same bits as copies.
static void test_heads_are_read_in_place(void **state) {
    Fixture *f = *state;
    fixture_plan(f, "t.yaml", heads_lesson("[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]", "[1, 2, 3, 4]"));
    assert_int_equal(in_place_and_copied(f, NULL, 0), 5);
}

// A nan in x (0 / 0) reaches Q, K and V: nothing is read in place (the notes on the nan are
// those of copies), and the output and every note are the same.
static void test_a_nan_is_copied_not_read_in_place(void **state) {
    Fixture *f = *state;
    fixture_plan(f, "t.yaml", heads_lesson("[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]", "[1, 2, 0, 4]"));
    assert_int_equal(in_place_and_copied(f, NULL, 0), 0);
    // the nan's note names where it came from, the same in both runs (compared above)
    bool said = false;
    for (size_t i = 0; i < f->trace->n_stages; i++)
        for (size_t k = 0; k < f->trace->stages[i].n_notes; k++)
            said = said || strstr(f->trace->stages[i].notes[k], "nan") != NULL;
    assert_true(said);
}

// Shown work reads values: a stage whose work is asked for, and the inputs of one, are copies.
static void test_work_shown_is_not_read_in_place(void **state) {
    Fixture *f = *state;
    const Plan *plan =
        fixture_plan(f, "t.yaml", heads_lesson("[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]", "[1, 2, 3, 4]"));
    // the work of K_heads.T (scores.1) needs its values, and that of heads_out its inputs':
    // neither is read in place, nor K_heads, which K_heads.T copies, nor V_heads, which
    // heads_out reads; Q_heads still is
    ExplainTarget extra[2] = {{.node = node_of(plan, "scores.1"), .kind = EXPLAIN_ALL},
                              {.node = node_of(plan, "heads_out"), .kind = EXPLAIN_ELEMENT, .n_index = 3}};
    assert_int_equal(in_place_and_copied(f, extra, 2), 1);
}

// A product with no heads at all (an empty slice) written into its merge: nothing to place,
// and nothing goes wrong.
static void test_no_heads_written_in_place(void **state) {
    Fixture *f = *state;
    fixture_plan(f, "t.yaml",
                 "title: t\n"
                 "given:\n"
                 "  X: {shape: [2, 3, 4], init: ones}\n"
                 "  W: {shape: [4, 4], init: ones}\n"
                 "steps:\n"
                 "  - out: merge_heads(X[0:0] @ W)\n");
    assert_int_equal(in_place_and_copied(f, NULL, 0), 1);
    assert_int_equal(f->trace->tensors[node_of(f->plan, "out")]->size, 0);
}

// A view beside a vector, on either side: split_heads(X, 2) @ w and u @ split_heads(X, 2).T,
// each read in place with the bits of copies (the batch axis of the view against none).
static void test_views_beside_vectors(void **state) {
    Fixture *f = *state;
    fixture_plan(f, "t.yaml",
                 "title: t\n"
                 "given:\n"
                 "  X: {shape: [3, 4], init: random, seed: 7}\n"
                 "  w: [0.5, -1.25]\n"
                 "  u: [2.0, 0.75]\n"
                 "steps:\n"
                 "  - right: split_heads(X, 2) @ w\n"
                 "  - left: u @ split_heads(X, 2).T\n"
                 "  - out: right + left\n");
    // split_heads(X, 2) twice and its transpose
    assert_int_equal(in_place_and_copied(f, NULL, 0), 3);
}

static const char *block_path;  // tests/bench/gpt2_block.yaml

// GPT-2's block at n = 128 (the benchmark's lesson with 1024 made 128) printing only its
// output: its five head stages read in place, the output the same to the bit as with copies.
static void test_the_block_reads_its_heads_in_place(void **state) {
    needs_the_fast_schedule();
    Fixture *f = *state;
    FILE *file = fopen(block_path, "rb");
    assert_non_null(file);
    static char text[16384], small[16384];
    size_t len = fread(text, 1, sizeof(text) - 1, file);
    assert_true(feof(file));  // the whole lesson was read
    fclose(file);
    text[len] = '\0';
    size_t at = 0;
    for (const char *p = text; *p;) {
        if (strncmp(p, "1024", 4) == 0) {
            memcpy(small + at, "128", 3);
            at += 3;
            p += 4;
        } else {
            small[at++] = *p++;
        }
    }
    small[at] = '\0';
    assert_non_null(strstr(small, "n: 128"));
    fixture_plan(f, "gpt2_block.yaml", small);
    assert_int_equal(in_place_and_copied(f, NULL, 0), 5);
}

// ---------------------------------------------------------------- every lesson, both ways

// The text trace of path with opts, values freed or kept; fails on the first difference.
static size_t runs;

static void same_both_ways(const char *path, PipelineOptions opts, const char *what) {
    StrBuf out[2];
    Diag diag[2];
    int status[2];
    for (int k = 0; k < 2; k++) {
        strbuf_init(&out[k]);
        diag_init(&diag[k]);
        opts.keep_every_stage = k == 1;
        status[k] = pipeline_run_file(path, &opts, &out[k], &diag[k]);
    }
    runs++;
    const char *a = strbuf_str(&out[0]), *b = strbuf_str(&out[1]);
    if (status[0] != status[1] || strcmp(a, b) != 0 || strcmp(diag[0].message, diag[1].message) != 0) {
        size_t at = 0;
        while (a[at] && a[at] == b[at])
            at++;
        size_t line = 1;
        for (size_t i = 0; i < at; i++)
            line += a[i] == '\n';
        fail_msg("%s %s: freeing changes the output at line %zu (status %d against %d)\nfreed: %.120s\nkept:  %.120s",
                 path, what, line, status[0], status[1], a + at, b + at);
    }
    strbuf_finish(&out[0]);
    strbuf_finish(&out[1]);
}

// The stage names of the lesson at path, in order (pipeline_list_stages: a name first on each line).
static size_t stage_names(const char *path, char ***names) {
    StrBuf list;
    strbuf_init(&list);
    Diag diag;
    diag_init(&diag);
    *names = NULL;
    if (pipeline_list_stages(path, &list, &diag) != STATUS_OK) {
        strbuf_finish(&list);
        return 0;  // a lesson refused: compared as it is, without choosing stages
    }
    size_t n = 0;
    for (const char *p = strbuf_str(&list); *p;) {
        size_t len = strcspn(p, " \n");
        *names = realloc(*names, (n + 1) * sizeof(char *));
        assert_non_null(*names);
        (*names)[n] = strndup(p, len);
        assert_non_null((*names)[n]);
        n++;
        p += strcspn(p, "\n");
        p += *p == '\n';
    }
    strbuf_finish(&list);
    return n;
}

static void test_every_lesson_prints_the_same_when_values_are_freed(void **state) {
    (void)state;
    for (size_t l = 0; l < n_lesson_paths; l++) {
        const char *path = lesson_paths[l];
        PipelineOptions base = {.digits = -1, .width = 100, .threads = 1};
        same_both_ways(path, base, "");
        PipelineOptions brief = base;
        brief.brief = true;
        same_both_ways(path, brief, "--brief");
        char **names;
        size_t n = stage_names(path, &names);
        char what[320];
        for (size_t i = 0; i < n; i++) {
            // Each stage alone, every other one with --brief; a range from and to some stages.
            PipelineOptions only = i % 2 ? brief : base;
            only.only = names[i];
            snprintf(what, sizeof(what), "%s--only %s", i % 2 ? "--brief " : "", names[i]);
            same_both_ways(path, only, what);
            if (i % 3 == 0) {
                PipelineOptions range = base;
                range.from = names[i];
                range.to = names[i + 2 < n ? i + 2 : n - 1];
                snprintf(what, sizeof(what), "--from %s --to %s", range.from, range.to);
                same_both_ways(path, range, what);
                range.from = NULL;
                range.to = names[i];
                range.brief = true;
                snprintf(what, sizeof(what), "--brief --to %s", range.to);
                same_both_ways(path, range, what);
            }
        }
        for (size_t i = 0; i < n; i++)
            free(names[i]);
        free(names);
    }
    print_message("%zu lessons, %zu ways of printing them, each with values freed and kept\n", n_lesson_paths,
                  runs);
}

// Every lesson traced by the fast layer (its product, loops on two threads, values freed and
// read in place) and by the reference (the plain product on one thread, every value kept):
// the same text and the same JSON, byte for byte. The reference build has only the second.
static void test_every_lesson_the_same_with_the_reference(void **state) {
    (void)state;
    const Backend *fast_backend = backend_installed();
    const Schedule *fast_schedule = schedule_installed();
    if (!fast_backend && !fast_schedule) {
        print_message("the reference build has no fast layer to compare with\n");
        skip();
    }
    size_t compared = 0;
    for (size_t l = 0; l < n_lesson_paths; l++) {
        for (int format = 0; format < 2; format++) {
            PipelineOptions opts = {.digits = -1, .width = 100, .threads = 2,
                                    .format = format ? OUTPUT_JSON : OUTPUT_TEXT};
            StrBuf out[2];
            Diag diag[2];
            int status[2];
            for (int k = 0; k < 2; k++) {
                backend_install(k ? NULL : fast_backend);
                schedule_install(k ? NULL : fast_schedule);
                strbuf_init(&out[k]);
                diag_init(&diag[k]);
                status[k] = pipeline_run_file(lesson_paths[l], &opts, &out[k], &diag[k]);
            }
            backend_install(fast_backend);
            schedule_install(fast_schedule);
            const char *a = strbuf_str(&out[0]), *b = strbuf_str(&out[1]);
            if (status[0] != status[1] || strcmp(a, b) != 0 || strcmp(diag[0].message, diag[1].message) != 0) {
                size_t at = 0;
                while (a[at] && a[at] == b[at])
                    at++;
                fail_msg("%s (%s): the fast layer and the reference differ at byte %zu (status %d against %d)\n"
                         "fast:      %.120s\nreference: %.120s",
                         lesson_paths[l], format ? "json" : "text", at, status[0], status[1], a + at, b + at);
            }
            strbuf_finish(&out[0]);
            strbuf_finish(&out[1]);
            compared++;
        }
    }
    print_message("%zu traces the same with the fast layer and the reference\n", compared);
}

int main(int argc, char **argv) {
    test_install_fast_layer();
    if (argc < 4 || strcmp(argv[1], "--block") != 0) {
        fprintf(stderr, "usage: %s --block GPT2_BLOCK.yaml LESSON.yaml...\n", argv[0]);
        return 1;
    }
    block_path = argv[2];
    lesson_paths = argv + 3;
    n_lesson_paths = (size_t)(argc - 3);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_last_readers_of_a_chain, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_last_readers_of_a_gradient, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_last_readers_past_the_work_followed, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_run_frees_what_is_not_kept, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_run_frees_gradient_stages, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_run_keeps_everything_by_default, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_held_values_all_kept, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_held_values_freed_after_their_last_reader, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(test_held_values_on_top_of_a_base, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_held_values_of_shapes_alone, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_refuses_a_lesson_past_its_memory, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(test_the_reference_keeps_every_value, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_heads_are_read_in_place, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_a_nan_is_copied_not_read_in_place, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_work_shown_is_not_read_in_place, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_no_heads_written_in_place, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_views_beside_vectors, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_the_block_reads_its_heads_in_place, fixture_setup, fixture_teardown),
        cmocka_unit_test(test_every_lesson_prints_the_same_when_values_are_freed),
        cmocka_unit_test(test_every_lesson_the_same_with_the_reference),
        cmocka_unit_test_setup_teardown(test_a_step_naming_a_gradient_is_marked, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_only_a_last_axis_softmax_is_a_row_distribution, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(test_a_weight_file_cut_short_is_an_error, fixture_setup, fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

// modes: the table of the command line's modes.
#include "modes.h"

#include "cmd.h"

#define EVERY_FORMAT \
    (CLI_FORMAT_BIT(OUTPUT_TEXT) | CLI_FORMAT_BIT(OUTPUT_JSON) | CLI_FORMAT_BIT(OUTPUT_HTML))

// What decides the stages a trace shows and how it shows them.
#define VIEW_OPTIONS                                                                                                 \
    (CLI_BIT(CLI_DIGITS) | CLI_BIT(CLI_COLOR) | CLI_BIT(CLI_EXPLAIN) | CLI_BIT(CLI_WIDTH) | CLI_BIT(CLI_HEATMAP) | \
     CLI_BIT(CLI_BRIEF) | CLI_BIT(CLI_ONLY) | CLI_BIT(CLI_FROM) | CLI_BIT(CLI_TO))
// A trace printed whole: its stages, their files (--save), and the verdict of its claims.
// What a lesson is run on: the folder of its weight files, and a text in place of its own.
#define INPUT_OPTIONS (CLI_BIT(CLI_WEIGHTS) | CLI_BIT(CLI_TEXT))
#define TRACE_OPTIONS \
    (VIEW_OPTIONS | INPUT_OPTIONS | CLI_BIT(CLI_THREADS) | CLI_BIT(CLI_SAVE) | CLI_BIT(CLI_STRICT))

// A mode that takes another mode's option is taken by it in turn (tests/test_cli.c checks),
// so that two modes given together are refused whichever is read first.
const CliMode modes[] = {
    {.option = CLI_LIST, .does = "lists the course's lessons, or a lesson's stages", .run = cmd_list,
     .max_lessons = 1, .takes = CLI_BIT(CLI_WEIGHTS)},
    {.option = CLI_WATCH, .does = "traces one lesson again at each save", .run = cmd_watch,
     .min_lessons = 1, .max_lessons = 1,
     .takes = TRACE_OPTIONS | CLI_BIT(CLI_CHECK) | CLI_BIT(CLI_GOLDEN), .formats = EVERY_FORMAT},
    {.option = CLI_DIFF, .does = "prints its own text report", .run = cmd_diff,
     .min_lessons = 1, .max_lessons = 2,  // cmd_diff names the second one missing
     .takes = CLI_BIT(CLI_DIGITS) | CLI_BIT(CLI_COLOR) | CLI_BIT(CLI_WIDTH) | CLI_BIT(CLI_THREADS) | INPUT_OPTIONS,
     .formats = CLI_FORMAT_BIT(OUTPUT_TEXT)},
    {.option = CLI_STEP, .does = "shows the text trace in a terminal", .run = cmd_step,
     .min_lessons = 1, .max_lessons = 1,
     .takes = VIEW_OPTIONS | INPUT_OPTIONS | CLI_BIT(CLI_THREADS) | CLI_BIT(CLI_SAVE),
     .formats = CLI_FORMAT_BIT(OUTPUT_TEXT)},
    {.option = CLI_QUIZ, .does = "asks questions of its own and prints no trace", .run = cmd_quiz,
     .min_lessons = 1, .max_lessons = 1,
     .takes = CLI_BIT(CLI_DIGITS) | CLI_BIT(CLI_COLOR) | CLI_BIT(CLI_WIDTH) | CLI_BIT(CLI_THREADS) |
              CLI_BIT(CLI_QUIZ_SEED) | INPUT_OPTIONS,
     .formats = CLI_FORMAT_BIT(OUTPUT_TEXT)},
    {.option = CLI_LINT, .does = "checks the lesson's narration and prints no trace", .run = cmd_lint,
     .min_lessons = 1, .max_lessons = 1, .takes = CLI_BIT(CLI_THREADS) | CLI_BIT(CLI_WEIGHTS)},
    {.option = CLI_CHECK, .does = "compares the text trace with its golden file", .run = cmd_trace,
     .min_lessons = 1, .max_lessons = 1,
     .takes = TRACE_OPTIONS | CLI_BIT(CLI_GOLDEN) | CLI_BIT(CLI_WATCH), .formats = CLI_FORMAT_BIT(OUTPUT_TEXT)},
    // Golden files never depend on the terminal: always without colour, at 80 columns unless
    // --width says otherwise.
    {.option = CLI_UPDATE_GOLDEN, .does = "writes the golden file without colour", .run = cmd_update_golden,
     .min_lessons = 1, .max_lessons = 1,
     .takes = (TRACE_OPTIONS & ~CLI_BIT(CLI_COLOR)) | CLI_BIT(CLI_GOLDEN),
     .formats = CLI_FORMAT_BIT(OUTPUT_TEXT)},
    {.option = CLI_NO_OPTION, .does = "traces the lesson", .run = cmd_trace, .min_lessons = 1, .max_lessons = 1,
     .takes = TRACE_OPTIONS, .formats = EVERY_FORMAT},
};
const size_t modes_count = ARRAY_LEN(modes);

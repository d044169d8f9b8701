// bench_lessons: how long each hand-sized lesson takes, the whole process, as a learner runs it.
//
//     bench_lessons TRACER LESSON.yaml...     (runs: TRACER_BENCH_RUNS, default 100)
//
// Each lesson is traced runs times (after 10 runs to warm the file cache), its output thrown
// away, and the median and the fastest run are printed beside the time of `TRACER --version`,
// which is what starting the program costs before any lesson is read. The goal, every lesson
// under 5 ms, is reported, never asserted: a shared machine is slower, not wrong.
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GOAL_MS 5.0
#define WARMUP 10

extern char **environ;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

// One run of argv with stdout and stderr on /dev/null: its wall time in ms, or -1 when it
// could not be started or did not exit 0.
static double run_once(char *const argv[], posix_spawn_file_actions_t *quiet) {
    pid_t pid;
    double start = now_ms();
    if (posix_spawn(&pid, argv[0], quiet, NULL, argv, environ) != 0)
        return -1;
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return now_ms() - start;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// Median and fastest of runs timed runs, after the warm-up; false when a run fails.
static int time_runs(char *const argv[], posix_spawn_file_actions_t *quiet, double *times, size_t runs,
                     double *median, double *fastest) {
    for (size_t i = 0; i < WARMUP; i++)
        if (run_once(argv, quiet) < 0)
            return 0;
    for (size_t i = 0; i < runs; i++)
        if ((times[i] = run_once(argv, quiet)) < 0)
            return 0;
    qsort(times, runs, sizeof(double), by_value);
    *median = runs % 2 ? times[runs / 2] : (times[runs / 2 - 1] + times[runs / 2]) / 2;
    *fastest = times[0];
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: bench_lessons TRACER LESSON.yaml...\n");
        return 2;
    }
    const char *env = getenv("TRACER_BENCH_RUNS");
    long runs = env ? strtol(env, NULL, 10) : 100;
    if (runs < 1 || runs > 100000) {
        fprintf(stderr, "bench_lessons: TRACER_BENCH_RUNS must be 1 to 100000\n");
        return 2;
    }
    double *times = malloc((size_t)runs * sizeof(double));
    posix_spawn_file_actions_t quiet;
    if (!times || posix_spawn_file_actions_init(&quiet) != 0 ||
        posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0) != 0 ||
        posix_spawn_file_actions_addopen(&quiet, 2, "/dev/null", O_WRONLY, 0) != 0) {
        fprintf(stderr, "bench_lessons: out of memory\n");
        return 2;
    }
    double median, fastest;
    char *version[] = {argv[1], "--version", NULL};
    if (!time_runs(version, &quiet, times, (size_t)runs, &median, &fastest)) {
        fprintf(stderr, "bench_lessons: %s --version does not run\n", argv[1]);
        return 2;
    }
    printf("%-40s %9s %9s\n", "whole process, median of runs", "median", "fastest");
    printf("%-40s %6.2f ms %6.2f ms\n", "tracer --version (starting the program)", median, fastest);
    int over = 0, failed = 0;
    for (int i = 2; i < argc; i++) {
        const char *name = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        char *lesson[] = {argv[1], argv[i], NULL};
        if (!time_runs(lesson, &quiet, times, (size_t)runs, &median, &fastest)) {
            printf("%-40s does not trace (exit status not 0)\n", name);
            failed++;
            continue;
        }
        over += median >= GOAL_MS;
        printf("%-40s %6.2f ms %6.2f ms%s\n", name, median, fastest, median >= GOAL_MS ? "  (5 ms or more)" : "");
    }
    printf("%d of %d lessons take %.0f ms or more (median of %ld runs)\n", over, argc - 2 - failed, GOAL_MS, runs);
    posix_spawn_file_actions_destroy(&quiet);
    free(times);
    return failed ? 1 : 0;
}

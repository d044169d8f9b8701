// check: a Lesson turned into a Plan (plan.h). Resolves every name, infers every shape through
// the op table's rules, and reports the first problem with its place in the file, before any
// output.
//
//     Plan *plan = check_lesson(lesson, &diag);   // NULL: diag says where and why
//     ...
//     plan_destroy(plan);
#pragma once

#include "diag.h"
#include "lesson.h"
#include "plan.h"

// Check a lesson. NULL with a located error in diag when it cannot run.
Plan *check_lesson(const Lesson *lesson, Diag *diag);

// The same within memory (NULL: no limit): a lesson whose plan would pass memory->bytes is
// refused at the given or step whose checking passes it.
Plan *check_lesson_within(const Lesson *lesson, const PlanMemory *memory, Diag *diag);

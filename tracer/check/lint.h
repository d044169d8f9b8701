// lint: what a teacher would point out in a lesson that runs: numbers that agree with each
// other in the textbook but no longer do after an edit. Warnings only, never errors: the lesson
// still runs, and the student sees why a number looks odd.
//
//     Plan *plan = plan_create(lesson, &diag);
//     lint_plan(plan, &diag);   // diag.warnings: "mine.yaml:32:8: d_k is 16, but K has ..."
#pragma once

#include "diag.h"
#include "plan.h"

void lint_plan(const Plan *plan, Diag *diag);

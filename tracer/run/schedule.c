// schedule: the installed schedule, none in the reference.
#include "schedule.h"

static const Schedule *installed;

void schedule_install(const Schedule *schedule) {
    installed = schedule;
}

const Schedule *schedule_installed(void) {
    return installed;
}

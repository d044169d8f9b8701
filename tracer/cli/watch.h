// watch: wait, without using the processor, until a lesson file is saved again (inotify).
//
//     Watch *w = watch_create("mine.yaml", &diag);  // NULL when it cannot: diag says why
//     for (;;) {
//         ... trace mine.yaml ...
//         WatchEvent event;
//         if (watch_wait(w, NULL, &event, &diag) != STATUS_OK)  // blocks until the next save
//             break;
//     }
//     watch_destroy(w);
//
// Editors save in two ways: they write the file in place, or they write a new file and rename
// it over the old one (vim, emacs, most IDEs), which gives the name a new inode. So the folder
// is watched for the file's name, and the file itself is watched again after every change (for
// a lesson reached through a symbolic link).
#pragma once

#include <signal.h>

#include "diag.h"

typedef struct Watch Watch;

typedef enum WatchEvent {
    WATCH_SAVED,  // the file was written, or a new file took its name
    WATCH_GONE,   // the file was deleted or renamed away; the watch goes on for its name
    WATCH_SIGNAL, // a signal interrupted the wait (the caller's handler says what it meant)
} WatchEvent;

// Status 2 with a message when path is not a regular file (a pipe is read only once) or the
// system refuses a watch.
Watch *watch_create(const char *path, Diag *diag);
// Block until the file changes, then until it has been quiet for a moment (an editor's save is
// several events); *event says whether the file is there. Status 2 when the folder holding
// the file is deleted or moved, or inotify fails. wait_mask (NULL: the signal mask as it is)
// is the signal mask while blocked, set atomically with the wait: a caller that blocks SIGINT,
// checks its handler's flag and passes the mask with SIGINT unblocked cannot miss a Ctrl-C
// that comes between its check and the wait (WATCH_SIGNAL).
int watch_wait(Watch *w, const sigset_t *wait_mask, WatchEvent *event, Diag *diag);
void watch_destroy(Watch *w);  // accepts NULL

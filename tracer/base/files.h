// files: every file the tracer reads or writes is opened here, so that reading never blocks and
// writing never destroys.
//
//     int err;
//     int fd = files_open_read("lessons/x.yaml", 0, &err);   // -1: files_error_text(err) says why
//     ...
//     err = files_write("golden/x.txt", write_text, &trace);  // 0, or why it was not written
//
// A file is read only when it is a regular file: a named pipe (FIFO) or a device is refused at
// once, never waited on, for it is opened without blocking until its kind is known. Each file
// read is remembered (device and inode), and a file written is written into a new file created
// beside its target (never through a link) and renamed over it, which is refused when the target
// is anything but a regular file, may not be written, or is one of the files read: a golden
// file or a saved stage can never replace the lesson, a weight file or a tokenizer's file.
// The files read are the process's: files are opened and written from the main thread only.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

// Why a file was not read or written, beside the errno values (which are positive).
enum {
    FILES_IS_FIFO = -1,     // a named pipe
    FILES_IS_DEVICE = -2,   // a character or block device
    FILES_IS_SOCKET = -3,
    FILES_IS_LINK = -4,     // a target to write that is a symbolic link
    FILES_IS_INPUT = -5,    // a target to write that is one of the files read
    FILES_CUT_SHORT = -6,   // a file that ends before what is read of it: it was cut short after
                            // it was opened (another program writes it)
};

// files_open_read's flags.
enum {
    // A pipe is read when it is the tracer's own standard input (`tracer /dev/stdin < x` or
    // `cat x | tracer /dev/stdin`): a lesson may come that way.
    FILES_STDIN_PIPE = 1,
};

// Open a regular file for reading: a descriptor (close it), or -1 with *err set (an errno value,
// EISDIR for a folder, or a FILES_IS_* value; ENOMEM when it could not be remembered).
int files_open_read(const char *path, unsigned flags, int *err);
// The whole file, at most max + 1 bytes (*len > max: it is larger than max), in a new buffer with
// a NUL after the bytes (util_free it). 0, or why it was not read (as files_open_read's *err).
int files_read(const char *path, unsigned flags, size_t max, char **bytes, size_t *len);
// The words for an error of this module: strerror's for an errno value.
const char *files_error_text(int err);
// Whether the error says that what is at the path is not a file (a pipe, a device, a socket),
// and the hint for a reader then.
bool files_not_regular(int err);
#define FILES_NOT_REGULAR_HINT \
    "the tracer reads only regular files (a pipe or a device could keep it waiting): copy it into one"

// Write path whole or not at all: fill writes the contents into a new file beside it (created
// exclusively, mode 0666 less the umask), which is renamed over path when fill returned true and
// everything was written. 0, or why not: an errno value (fill's errno, or EIO, when it returned
// false) or a FILES_IS_* value; nothing is left behind.
typedef bool FilesFill(FILE *f, const void *what);
int files_write(const char *path, FilesFill *fill, const void *what);
// Whether files_write may replace path: 0 when path does not exist or is a regular file that may
// be written and that was not read; otherwise why not (an errno value or a FILES_IS_* value).
int files_may_replace(const char *path);

// lesson_download: a lesson's download: key, the files it reads that cannot ship with it (a
// model's weights) and where to get them. When one is missing from the folder the lesson's
// files are read from, the lesson stops before anything else with one message that says
// which files to download, from where, and how to run the lesson on them:
//
//     download:
//       files: [config.json, model.safetensors, vocab.json, merges.txt]
//       from: https://huggingface.co/openai-community/gpt2
#pragma once

#include "lesson_loader.h"

// The start of the message when files are missing: the course's list shows it in place of a
// title, as what the lesson needs rather than what is wrong with it.
#define LESSON_DOWNLOAD_MISSING "this lesson reads files that are not in"

// Whether diag's error is that one: the lesson was refused only because its files are not there.
bool lesson_download_missing(const Diag *diag);

// Checks the download: node (NULL when absent) and that its files are there. False with the
// error set: located (status 1) when the key is written wrong, status 2 when a file is missing.
bool lesson_check_download(Loader *L, const Node *node);

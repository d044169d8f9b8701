// unicode_classes: the Unicode classes GPT-2's pre-tokenizer splits text by.
#pragma once

#include <stdbool.h>
#include <stdint.h>

bool unicode_is_letter(uint32_t cp);  // \p{L}
bool unicode_is_number(uint32_t cp);  // \p{N}

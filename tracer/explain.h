// explain: the "show your work" functions of the op table, one per operation family. Each
// writes, with op_work, the arithmetic of one element (or one row) of a result using the
// lesson's numbers, ending in the element's real value.
#pragma once

#include "ops.h"

bool explain_binary(OpExplain *e);
bool explain_unary(OpExplain *e);
bool explain_copy(OpExplain *e);
bool explain_matmul(OpExplain *e);
bool explain_transpose(OpExplain *e);
bool explain_index(OpExplain *e);
bool explain_take(OpExplain *e);
bool explain_softmax(OpExplain *e);
bool explain_layernorm(OpExplain *e);
bool explain_batchnorm(OpExplain *e);
bool explain_reduce(OpExplain *e);
bool explain_numel(OpExplain *e);
bool explain_concat(OpExplain *e);
bool explain_split_heads(OpExplain *e);
bool explain_merge_heads(OpExplain *e);
bool explain_causal_mask(OpExplain *e);
bool explain_relative_positions(OpExplain *e);
bool explain_arange(OpExplain *e);
bool explain_alibi_slopes(OpExplain *e);
bool explain_sinusoidal(OpExplain *e);
bool explain_rope(OpExplain *e);
bool explain_cross_entropy(OpExplain *e);

// heatmap: the colour of a value in a picture of its tensor, shared by the terminal and the
// HTML renderers so that a stage looks the same in both. One scale per tensor, chosen from its
// finite values:
//   - sequential, white to dark blue, over [0, 1] when every value lies in [0, 1] (attention
//     weights, probabilities: a fixed range, so that near-uniform weights look near-uniform),
//     or over [0, max] when every value is >= 0;
//   - diverging, blue through white to red, centred on 0 and symmetric by the largest |value|,
//     for signed values (scores, biases, position tables).
// Infinities sit at the ends of the scale (a causal mask's -inf is the darkest blue); nan has
// a grey of its own.
//
//     Heatmap h;
//     heatmap_init(&h, t->data, t->size);
//     HeatRgb bg = heatmap_colour(&h, 0.37);  // the cell's background
//     HeatRgb fg = heatmap_ink(bg);           // black or white text, whichever reads better
//     int c256 = heatmap_xterm256(bg);        // the nearest colour of a 256-colour terminal
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef enum HeatScale {
    HEAT_NONE,        // no finite value: nothing to scale
    HEAT_SEQUENTIAL,  // lo = 0, hi = 1 or the largest value
    HEAT_DIVERGING,   // lo = -hi, hi = the largest |value|
} HeatScale;

typedef struct Heatmap {
    HeatScale scale;
    double lo, hi;  // the range the colours span, printed under a picture
} Heatmap;

typedef struct HeatRgb {
    unsigned char r, g, b;
} HeatRgb;

// The number of shade levels of heatmap_shade: " ", "░", "▒", "▓", "█".
#define HEATMAP_SHADES 5

void heatmap_init(Heatmap *h, const double *values, size_t n);
// Where v lies along the scale, from 0 (lo) to 1 (hi), clamped; -1 for nan or HEAT_NONE.
double heatmap_position(const Heatmap *h, double v);
HeatRgb heatmap_colour(const Heatmap *h, double v);
// Black or white, whichever contrasts more with the background.
HeatRgb heatmap_ink(HeatRgb background);
// The nearest of xterm's 6x6x6 colour cube (16..231) and grey ramp (232..255).
int heatmap_xterm256(HeatRgb c);
// A shade for a picture without colour: level 0 (blank) to HEATMAP_SHADES - 1 (full block),
// by how far v lies along a sequential scale, or by |v| against the largest |value| on a
// diverging one; and its UTF-8 glyph. nan is level 0.
int heatmap_shade_level(const Heatmap *h, double v);
const char *heatmap_shade(int level);

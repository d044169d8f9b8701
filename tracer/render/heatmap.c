// heatmap: value -> colour on a per-tensor scale. Integer colour stops and one rounding per
// channel, so the same value gives the same colour on every machine.
#include "heatmap.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "util.h"

// ColorBrewer's Blues (sequential) and RdBu (diverging, blue for negative, red for positive).
static const HeatRgb sequential_stops[] = {
    {247, 251, 255}, {198, 219, 239}, {107, 174, 214}, {33, 113, 181}, {8, 48, 107},
};
static const HeatRgb diverging_stops[] = {
    {33, 102, 172}, {146, 197, 222}, {247, 247, 247}, {244, 165, 130}, {178, 24, 43},
};
static const HeatRgb nan_grey = {160, 160, 160};

void heatmap_init(Heatmap *h, const double *values, size_t n) {
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(values[i]))
            continue;
        lo = values[i] < lo ? values[i] : lo;
        hi = values[i] > hi ? values[i] : hi;
    }
    if (lo > hi) {
        *h = (Heatmap){.scale = HEAT_NONE, .lo = 0, .hi = 0};
    } else if (lo >= 0 && hi <= 1) {
        *h = (Heatmap){.scale = HEAT_SEQUENTIAL, .lo = 0, .hi = 1};
    } else if (lo >= 0) {
        *h = (Heatmap){.scale = HEAT_SEQUENTIAL, .lo = 0, .hi = hi};
    } else {
        double m = fmax(fabs(lo), fabs(hi));
        *h = (Heatmap){.scale = HEAT_DIVERGING, .lo = -m, .hi = m};
    }
}

double heatmap_position(const Heatmap *h, double v) {
    if (h->scale == HEAT_NONE || isnan(v))
        return -1;
    if (!(h->hi > h->lo))  // a one-valued range: the middle of a diverging scale, else the top
        return h->scale == HEAT_DIVERGING ? 0.5 : (v > 0 ? 1 : 0);
    double p = (v - h->lo) / (h->hi - h->lo);
    return p < 0 ? 0 : p > 1 ? 1 : p;
}

static unsigned char mix(unsigned char a, unsigned char b, double t) {
    return (unsigned char)lround(a + (b - a) * t);
}

HeatRgb heatmap_colour(const Heatmap *h, double v) {
    double p = heatmap_position(h, v);
    if (p < 0)
        return nan_grey;
    const HeatRgb *stops = h->scale == HEAT_DIVERGING ? diverging_stops : sequential_stops;
    size_t segments = ARRAY_LEN(sequential_stops) - 1;
    static_assert(ARRAY_LEN(sequential_stops) == ARRAY_LEN(diverging_stops), "scales have equal stops");
    double x = p * (double)segments;
    size_t k = (size_t)x;
    if (k >= segments)
        k = segments - 1;
    double t = x - (double)k;
    return (HeatRgb){mix(stops[k].r, stops[k + 1].r, t), mix(stops[k].g, stops[k + 1].g, t),
                     mix(stops[k].b, stops[k + 1].b, t)};
}

HeatRgb heatmap_ink(HeatRgb bg) {
    // Relative luminance with sRGB weights, in integers: light backgrounds get black text.
    unsigned lum = 2126u * bg.r + 7152u * bg.g + 722u * bg.b;  // up to 2,550,000
    return lum > 1400000u ? (HeatRgb){0, 0, 0} : (HeatRgb){255, 255, 255};
}

static int nearest_level(int v, int *level) {
    static const int levels[6] = {0, 95, 135, 175, 215, 255};
    int best = 0;
    for (int i = 1; i < 6; i++)
        if (abs(v - levels[i]) < abs(v - levels[best]))
            best = i;
    *level = levels[best];
    return best;
}

static int distance2(HeatRgb c, int r, int g, int b) {
    return (c.r - r) * (c.r - r) + (c.g - g) * (c.g - g) + (c.b - b) * (c.b - b);
}

int heatmap_xterm256(HeatRgb c) {
    int r, g, b;
    int cube = 16 + 36 * nearest_level(c.r, &r) + 6 * nearest_level(c.g, &g) + nearest_level(c.b, &b);
    int grey_index = ((c.r + c.g + c.b) / 3 - 8 + 5) / 10;  // grey k is 8 + 10k
    grey_index = grey_index < 0 ? 0 : grey_index > 23 ? 23 : grey_index;
    int grey = 8 + 10 * grey_index;
    return distance2(c, grey, grey, grey) < distance2(c, r, g, b) ? 232 + grey_index : cube;
}

int heatmap_shade_level(const Heatmap *h, double v) {
    double p = heatmap_position(h, v);
    if (p < 0)
        return 0;
    if (h->scale == HEAT_DIVERGING)
        p = fabs(2 * p - 1);  // |v| / max|value|
    int level = (int)(p * HEATMAP_SHADES);
    return level >= HEATMAP_SHADES ? HEATMAP_SHADES - 1 : level;
}

const char *heatmap_shade(int level) {
    static const char *const glyphs[HEATMAP_SHADES] = {" ", "\u2591", "\u2592", "\u2593", "\u2588"};
    return glyphs[level < 0 ? 0 : level >= HEATMAP_SHADES ? HEATMAP_SHADES - 1 : level];
}

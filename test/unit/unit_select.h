/*
 * unit_select.h - what dp_select's unit tests (test_select.c, test_select_combine.c) share: the
 * column set of a combined marginal, as dp_combine writes it.
 */
#ifndef DPSYNTH_UNIT_SELECT_H
#define DPSYNTH_UNIT_SELECT_H

#include <stdint.h>

#include "dp_marg.h"

typedef uint32_t set_t[DP_MARG_MAX_ATTRS];

#endif							/* DPSYNTH_UNIT_SELECT_H */

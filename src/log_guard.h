/*
 * log_guard.h - LOG messages kept from the clients of roles that are not superusers
 * (log_guard.c): the planner's estimates of a table such a role may not read.
 */
#ifndef DPSYNTH_LOG_GUARD_H
#define DPSYNTH_LOG_GUARD_H

#include "postgres.h"

/* defines dpsynth.restrict_client_messages and installs the hooks; from _PG_init */
extern void dpsynth_log_guard_init(void);

#endif

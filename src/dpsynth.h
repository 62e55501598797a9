/*
 * dpsynth.h - PostgreSQL glue shared by the SQL entry points.
 *
 * The algorithms live in src/core (pure C, no PostgreSQL headers); the files beside this one
 * decode arguments, check privileges, charge budgets, read tables and report errors.
 */
#ifndef DPSYNTH_H
#define DPSYNTH_H

#include "postgres.h"

#include "access/attnum.h"
#include "fmgr.h"
#include "utils/array.h"

#include "dp_domain.h"

/* SQLSTATEs of dpsynth's own (class DP); the README lists them. */
#define ERRCODE_DPSYNTH_BUDGET_EXHAUSTED	MAKE_SQLSTATE('D','P','0','0','1')
#define ERRCODE_DPSYNTH_ROLE_LIMIT			MAKE_SQLSTATE('D','P','0','0','2')
#define ERRCODE_DPSYNTH_CHARGE_FAILED		MAKE_SQLSTATE('D','P','0','0','3')

/* The largest marginal dp_marginal computes, in cells (8 bytes of counts per cell). */
#define DPSYNTH_MAX_MARGINAL_CELLS	(INT64CONST(16) * 1024 * 1024)

/* ---- dpsynth.c ---- */

extern int	dpsynth_charge_timeout_ms;

/* Switching to the extension owner to read and write the catalog. */
typedef struct DpOwnerSwitch
{
	Oid			save_userid;
	int			save_sec_context;
} DpOwnerSwitch;

extern Oid	dpsynth_extension_owner(void);
extern void dpsynth_become_owner(DpOwnerSwitch *sw);
extern void dpsynth_restore_user(const DpOwnerSwitch *sw);

/* Raises unless the current user may call release functions on the table. */
extern void dpsynth_check_release_privilege(Oid relid, const char *function);

/* Validates an epsilon argument (not NULL, finite, positive). */
extern double dpsynth_check_epsilon(FunctionCallInfo fcinfo, int argno);

/* Converts a call's epsilon to rho at the table's delta (returned in *delta); raises if the
 * table is not protected. */
extern double dpsynth_rho_for_call(Oid relid, double epsilon, double *delta);

/* ---- charge.c ---- */

/*
 * Charges rho to the table's budget in a transaction of its own, committed by a background
 * worker before this returns.  Raises (and releases nothing) when the charge is refused or
 * cannot be committed.  Returns the ledger id.
 */
extern int64 dpsynth_charge(Oid relid, const char *function, const char *columns_literal,
							double epsilon, double delta, double rho, const char *details_json);

/* Marks the ledger row completed, in the caller's transaction. */
extern void dpsynth_complete(int64 ledger_id);

/* ---- domain.c ---- */

/* A column of a protected table with its public domain, ready to encode values. */
typedef struct DpColumn
{
	char	   *name;
	AttrNumber	attnum;
	Oid			typid;			/* base type (domains unwrapped) */
	bool		notnull;
	dp_domain	domain;
	/* enum columns: sorted label OIDs and their codes */
	Oid		   *enum_oids;
	dp_code    *enum_codes;
	int			nenum;
	/* how a Datum becomes a code (DP_ENC_*, domain.c) */
	int			encoding;
	FmgrInfo	outfunc;		/* DP_ENC_OUTPUT: categories of other types, by their text */
} DpColumn;

/* Resolves column names to their domains; raises before any row is read when a column does
 * not exist, is listed twice or has no public domain. */
extern DpColumn *dpsynth_load_columns(Oid relid, ArrayType *names, int *ncolumns);

/* Encodes one value; never raises on a value. */
extern dp_code dpsynth_encode(DpColumn *col, Datum value, bool isnull);

/* Label of a code (NULL for the NULL cell) as a text datum. */
extern Datum dpsynth_code_label(DpColumn *col, dp_code code, bool *isnull);

#endif

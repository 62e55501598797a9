/*
 * compat.h - every difference between the PostgreSQL versions dpsynth builds against (15 and
 * later), in one place (pgvector style): the glue calls these names, never the versioned APIs.
 */
#ifndef DPSYNTH_COMPAT_H
#define DPSYNTH_COMPAT_H

#include "access/attmap.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "parser/parse_type.h"
#include "utils/acl.h"
#if PG_VERSION_NUM >= 160000
#include "nodes/miscnodes.h"
#endif

/*
 * 18: pg_attribute_noreturn() (a suffix) is gone; pg_noreturn is a prefix specifier.  Before 18,
 * the same attribute written as a prefix, which GCC and Clang accept.
 */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/* 16: pg_class_ownercheck and friends became object_ownercheck(classid, ...) */
#if PG_VERSION_NUM >= 160000
#define dpsynth_table_ownercheck(relid, roleid) object_ownercheck(RelationRelationId, (relid), (roleid))
#else
#define dpsynth_table_ownercheck(relid, roleid) pg_class_ownercheck((relid), (roleid))
#endif

/* 16: stringToQualifiedNameList takes an escontext for soft errors */
#if PG_VERSION_NUM >= 160000
#define dpsynth_qualified_name_list(s) stringToQualifiedNameList((s), NULL)
#else
#define dpsynth_qualified_name_list(s) stringToQualifiedNameList(s)
#endif

/* 16: build_attrmap_by_name_if_req takes missing_ok */
#if PG_VERSION_NUM >= 160000
#define dpsynth_attrmap_by_name_if_req(in, out) build_attrmap_by_name_if_req((in), (out), false)
#else
#define dpsynth_attrmap_by_name_if_req(in, out) build_attrmap_by_name_if_req((in), (out))
#endif

/* 16: pg_namespace_aclcheck became object_aclcheck(NamespaceRelationId, ...) */
#if PG_VERSION_NUM >= 160000
#define dpsynth_namespace_aclcheck(nsp, roleid, mode) object_aclcheck(NamespaceRelationId, (nsp), (roleid), (mode))
#else
#define dpsynth_namespace_aclcheck(nsp, roleid, mode) pg_namespace_aclcheck((nsp), (roleid), (mode))
#endif

/* A type by name, InvalidOid if there is none (16: parseTypeString reports that as a soft error) */
static inline void
dpsynth_parse_type(const char *str, Oid *typid, int32 *typmod)
{
#if PG_VERSION_NUM >= 160000
	ErrorSaveContext escontext;

	memset(&escontext, 0, sizeof(escontext));
	escontext.type = T_ErrorSaveContext;

	if (!parseTypeString(str, typid, typmod, (Node *) &escontext))
		*typid = InvalidOid;
#else
	parseTypeString(str, typid, typmod, true);
#endif
}

/* The wait while a shared-memory queue is empty: renamed in 17 (generated wait event names). */
#if PG_VERSION_NUM >= 170000
#define DP_WAIT_EVENT_MQ_RECEIVE WAIT_EVENT_MESSAGE_QUEUE_RECEIVE
#else
#define DP_WAIT_EVENT_MQ_RECEIVE WAIT_EVENT_MQ_RECEIVE
#endif

#endif							/* DPSYNTH_COMPAT_H */

/* config-internal.h - typed accessors over a yajl tree, shared by the
 * config.json parser (config.c, config_process.c, config_linux.c).
 *
 * Every accessor names the JSON path of the value in its error
 * ("process.rlimits[0].hard: expected an unsigned 64-bit integer"), so a
 * user can find the offending field.  Object getters treat an absent key
 * and an explicit JSON null alike: the field is "not set".  Numbers are
 * checked on yajl's unparsed text, because yajl's own integer conversion
 * is signed 64-bit and cannot represent e.g. RLIM_INFINITY
 * (18446744073709551615). */
#ifndef PROCTOR_CONFIG_INTERNAL_H
#define PROCTOR_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "config.h"
#include "../base/error.h"

/* Longest JSON path kept for error messages; longer ones are truncated. */
#define PR_JPATH_MAX 256

/* Writes "parent.key" (or just "key" when parent is "") into buf
 * (PR_JPATH_MAX bytes) and returns buf. */
const char *pr_jpath (char *buf, const char *parent, const char *key);
/* Writes "parent[i]" into buf (PR_JPATH_MAX bytes) and returns buf. */
const char *pr_jpath_index (char *buf, const char *parent, size_t i);

/* The value of key in object obj, or NULL when obj is not an object, the
 * key is absent or its value is JSON null.  With duplicate keys the first
 * one wins. */
yajl_val pr_json_get (yajl_val obj, const char *key);

/* Value checks.  path is the full JSON path of v, used in the error. */
int pr_json_expect_object (yajl_val v, const char *path, pr_error **err);
/* Copies a string value into *out (malloc'd). */
int pr_json_string (yajl_val v, const char *path, char **out, pr_error **err);
/* Unsigned decimal integer <= max ("expected an unsigned 32-bit integer"
 * when max is UINT32_MAX, else "... 64-bit ..."); rejects negatives,
 * fractions, exponents and overflow. */
int pr_json_unsigned (yajl_val v, const char *path, uint64_t max, uint64_t *out, pr_error **err);
/* Signed decimal integer within [min, max]. */
int pr_json_signed (yajl_val v, const char *path, int64_t min, int64_t max, int64_t *out, pr_error **err);
/* Array of strings into a new NULL-terminated vector. */
int pr_json_strv (yajl_val v, const char *path, char ***out, pr_error **err);

/* Field getters on object obj (already checked to be an object, or NULL).
 * parent is obj's own path ("" for the document root).  When the field is
 * not set they return 0 and leave *out untouched, setting *present (which
 * may be NULL) to false. */
int pr_json_get_string (yajl_val obj, const char *parent, const char *key, char **out, pr_error **err);
int pr_json_get_bool (yajl_val obj, const char *parent, const char *key, bool *out, bool *present, pr_error **err);
int pr_json_get_u32 (yajl_val obj, const char *parent, const char *key, uint32_t *out, bool *present, pr_error **err);
int pr_json_get_u64 (yajl_val obj, const char *parent, const char *key, uint64_t *out, bool *present, pr_error **err);
int pr_json_get_i64 (yajl_val obj, const char *parent, const char *key, int64_t min, int64_t max,
                     int64_t *out, bool *present, pr_error **err);
int pr_json_get_strv (yajl_val obj, const char *parent, const char *key, char ***out, pr_error **err);
/* *out = the object / array value, or NULL when not set. */
int pr_json_get_object (yajl_val obj, const char *parent, const char *key, yajl_val *out, pr_error **err);
int pr_json_get_array (yajl_val obj, const char *parent, const char *key, yajl_val *out, pr_error **err);
/* The "missing required field" error for parent.key.  Returns -1. */
int pr_json_missing (const char *parent, const char *key, pr_error **err);

/* An array of runtime-spec LinuxIDMapping objects ({containerID, hostID,
 * size}, all required uint32) at obj.key. */
int pr_json_get_idmaps (yajl_val obj, const char *parent, const char *key, struct pr_idmap **out, size_t *n,
                        pr_error **err);
/* An object of string values at obj.key into a key/value array. */
int pr_json_get_keyvals (yajl_val obj, const char *parent, const char *key, struct pr_keyval **out, size_t *n,
                         pr_error **err);
void pr_keyvals_free (struct pr_keyval *kv, size_t n);

/* Parses data (len bytes, need not be NUL-terminated) into a yajl tree
 * whose root is an object (config.c).  what names the document in errors
 * ("config.json", "process JSON").  Errors are "invalid WHAT: ..." for bad
 * JSON, too-deep nesting, embedded NULs or a non-object top level.  The
 * caller frees *out with yajl_tree_free(). */
int pr_config_parse_tree (const char *data, size_t len, const char *what, yajl_val *out, pr_error **err);

/* Parses the process object obj, whose path is parent ("process"), into p
 * (config_process.c), which must be zeroed.  On error p may be partly
 * filled; pr_process_free_contents() releases it either way. */
int pr_config_parse_process (yajl_val obj, const char *parent, struct pr_process *p, pr_error **err);

/* Parses the "linux" object (config_linux.c) into out, which must be
 * zeroed.  On error out may be partly filled; pr_linux_free_contents()
 * releases it either way. */
int pr_config_parse_linux (yajl_val linux_obj, struct pr_linux *out, pr_error **err);
void pr_linux_free_contents (struct pr_linux *l);

#endif

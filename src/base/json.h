/* json.h - taking the text out of a yajl generator (yajl_gen), which every
 * JSON writer in the tree ends with: state.json, the runtime-spec state,
 * `features`, `list`, `events`, `update`, `spec`, the JSON log lines, cgroup
 * stats, the rollout policy and the egress decision log. */
#ifndef PROCTOR_JSON_H
#define PROCTOR_JSON_H

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

/* Returns the text generated so far by g as a malloc'd NUL-terminated
 * string (the caller frees it) and frees g.  The text holds no NUL byte:
 * yajl writes U+0000 inside a string as the escape \u0000 (RFC 8259
 * section 7), so strlen gives its length.  Never fails: aborts when memory
 * runs out, or when g has no buffer of its own (a yajl_gen_print_callback
 * was configured, which no caller does).  Source: yajl_gen.h
 * yajl_gen_get_buf. */
char *pr_json_gen_finish (yajl_gen g);

/* As pr_json_gen_finish, with a '\n' after the text: one record of a JSON
 * Lines file (runc's --log-format=json, the egress decision log). */
char *pr_json_gen_finish_line (yajl_gen g);

/* Generates the parsed value v (a yajl_tree, any type; NULL is JSON null)
 * into g as it was: objects keep their key order, numbers their text. */
void pr_json_gen_value (yajl_gen g, yajl_val v);

/* Generates base merged with over into g: two objects merge key by key
 * (over wins, base's keys first in base's order, then over's new ones);
 * anything else is replaced by over; over NULL keeps base.  This is the
 * rule `update` writes new linux.resources into the state's config.json
 * with.  Source: runc update(8) ("only what is given changes"). */
void pr_json_gen_merged (yajl_gen g, yajl_val base, yajl_val over);

/* The value of key in object o (first match), or NULL when o is not an
 * object or has no such key. */
yajl_val pr_json_object_get (yajl_val o, const char *key);

#endif

/* passwd.h - the verifier's /etc/passwd under verifier.base "image": the
 * live file's users, with the home directory and login shell of each user
 * the image's file also has taken from the image.
 *
 * Why: su(1) and runuser(1) start the target user's login shell (field 7)
 * and cd to its home (field 6) as the live /etc/passwd gives them, and
 * that file is the agent's.  An agent that sets root's or a task user's
 * shell to a program of its own has it run, as that user, in every
 * `su USER -c ...` of the verifier (an attacker's trial of 2026-12-04).
 * Names, uids, gids, GECOS and the users a task added stay the live
 * file's: a task may add users, and the verifier checks for them.
 * Source: passwd(5) (seven colon-separated fields, one entry per line). */
#ifndef PROCTOR_ROLLOUT_PASSWD_H
#define PROCTOR_ROLLOUT_PASSWD_H

#include <stddef.h>

/* Files larger than this (bytes) are not merged: real ones are kilobytes. */
#define PR_PASSWD_MAX (4u << 20)

/* Returns a malloc'd copy of live (live_len bytes), one line per line of
 * live, in which every entry that names a user of the image's file
 * (image, image_len bytes), or else has the uid of one, is written as
 * name:password:uid:gid:GECOS from live and home:shell from that image
 * user's first entry.  Lines are read as glibc's files backend reads them
 * (passwd.c: up to a NUL, leading blanks skipped, the shell the rest of
 * the line), so what su sees is what was merged.  Other lines (comments,
 * users the image lacks) are kept as they are; every line of the result
 * ends in '\n'; *out_len gets its length in bytes.  Pure: no I/O, never
 * fails (allocation failure aborts, as xmalloc does). */
char *pr_passwd_merge_login (const char *live, size_t live_len, const char *image, size_t image_len,
                             size_t *out_len);

#endif

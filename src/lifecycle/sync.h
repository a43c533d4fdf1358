/* sync.h - the message protocol between the runtime and the processes it
 * forks into a container (stage 1, which joins/creates namespaces, and the
 * container process itself), over a SOCK_SEQPACKET socketpair.  Each
 * message is one datagram: a fixed header and an optional text payload
 * (error message or state JSON).  A closed peer reads as EOF, which the
 * receiver turns into an error: the child died before saying why. */
#ifndef PROCTOR_SYNC_H
#define PROCTOR_SYNC_H

#include <stdint.h>

#include "../base/error.h"

enum pr_sync_type
{
  PR_SYNC_GO = 1,         /* parent -> stage 1: placed in the cgroup, proceed */
  PR_SYNC_USERNS_READY,   /* stage 1 -> parent: unshared user ns, write maps */
  PR_SYNC_MAPS_DONE,      /* parent -> stage 1 */
  PR_SYNC_PID,            /* stage 1 -> parent: value = container pid (host) */
  PR_SYNC_HOOKS,          /* init -> parent: run prestart/createRuntime now */
  PR_SYNC_HOOKS_DONE,     /* parent -> init: text = state JSON */
  PR_SYNC_STATE,          /* parent -> init: text = state JSON, status "created" */
  PR_SYNC_READY,          /* init -> parent: waiting for start */
  PR_SYNC_ERROR,          /* either way: errnum + text */
};

#define PR_SYNC_MAX_TEXT (256 * 1024)

struct pr_sync_msg
{
  int32_t type;
  int32_t value;
  int32_t errnum;
  char *text; /* malloc'd, NUL-terminated, may be NULL */
};

/* Sends one message.  text may be NULL.  Errors: sendmsg errno. */
int pr_sync_send (int fd, int type, int value, const char *text, pr_error **err);

/* Sends an ERROR message carrying e (best effort, ignores failures). */
void pr_sync_send_error (int fd, const pr_error *e);

/* Receives the next message and checks it is of type `want`; *value_out and
 * *text_out (malloc'd) may be NULL.  Errors: an ERROR message becomes the
 * returned error (its errno and text as is); EOF becomes "WHO exited before
 * it was ready" (EPIPE); an unexpected type is EPROTO. */
int pr_sync_expect (int fd, int want, const char *who, int *value_out, char **text_out, pr_error **err);



/* Waits for the peer to exec: EOF on the socket (it is close-on-exec)
 * means success; an ERROR message is returned as the error. */
int pr_sync_wait_exec (int fd, pr_error **err);
#endif

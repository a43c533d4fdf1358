/* sync.c - runtime <-> container-process messages (see sync.h). */
#define _GNU_SOURCE
#include "sync.h"
#include "../base/util.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

struct wire_header
{
  int32_t type;
  int32_t value;
  int32_t errnum;
};

int
pr_sync_send (int fd, int type, int value, const char *text, pr_error **err)
{
  struct wire_header h = { type, value, 0 };
  struct iovec iov[2] = { { &h, sizeof h }, { (void *) (text ? text : ""), text ? strlen (text) : 0 } };
  struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };

  if (type == PR_SYNC_ERROR)
    h.errnum = value;
  for (;;)
    {
      if (sendmsg (fd, &m, MSG_NOSIGNAL) >= 0)
        return 0;
      if (errno != EINTR)
        return pr_error_set (err, errno, "send sync message");
    }
}

void
pr_sync_send_error (int fd, const pr_error *e)
{
  pr_sync_send (fd, PR_SYNC_ERROR, e ? e->errnum : 0, e ? e->msg : "unknown error", NULL);
}

static int
recv_msg (int fd, struct pr_sync_msg *out, pr_error **err)
{
  _cleanup_free_ char *buf = xmalloc (sizeof (struct wire_header) + PR_SYNC_MAX_TEXT + 1);
  ssize_t r;
  do
    r = recv (fd, buf, sizeof (struct wire_header) + PR_SYNC_MAX_TEXT, 0);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return pr_error_set (err, errno, "receive sync message");
  if (r == 0)
    {
      out->type = 0;
      return 0;
    }
  if ((size_t) r < sizeof (struct wire_header))
    return pr_error_set (err, EPROTO, "short sync message");
  struct wire_header h;
  memcpy (&h, buf, sizeof h);
  out->type = h.type;
  out->value = h.value;
  out->errnum = h.errnum;
  size_t tlen = r - sizeof h;
  out->text = xmalloc (tlen + 1);
  memcpy (out->text, buf + sizeof h, tlen);
  out->text[tlen] = '\0';
  return 0;
}

int
pr_sync_expect (int fd, int want, const char *who, int *value_out, char **text_out, pr_error **err)
{
  struct pr_sync_msg m = { 0 };
  if (recv_msg (fd, &m, err) < 0)
    return -1;
  _cleanup_free_ char *text = m.text;
  if (m.type == 0)
    return pr_error_set (err, 0, "%s exited before it was ready", who);
  if (m.type == PR_SYNC_ERROR)
    {
      pr_error_set (err, 0, "%s", text);
      (*err)->errnum = m.errnum;
      return -1;
    }
  if (m.type != want)
    return pr_error_set (err, EPROTO, "%s: unexpected sync message %d (wanted %d)", who, m.type, want);
  if (value_out)
    *value_out = m.value;
  if (text_out)
    *text_out = steal_pointer (&text);
  return 0;
}

int
pr_sync_wait_exec (int fd, pr_error **err)
{
  struct pr_sync_msg m = { 0 };
  if (recv_msg (fd, &m, err) < 0)
    return -1;
  _cleanup_free_ char *text = m.text;
  if (m.type == 0)
    return 0;
  if (m.type == PR_SYNC_ERROR)
    {
      pr_error_set (err, 0, "%s", text);
      (*err)->errnum = m.errnum;
      return -1;
    }
  return pr_error_set (err, EPROTO, "unexpected sync message %d while waiting for exec", m.type);
}

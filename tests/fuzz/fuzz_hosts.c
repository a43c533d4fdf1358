/* fuzz_hosts.c - libFuzzer target for the hosts-file reader the egress
 * helper uses (src/rollout/egress/egress.c setup_dns: libevent's
 * evdns_base_load_hosts over the container's /etc/hosts, which the image
 * and the agent control).  Input: a hosts file; its first word is also
 * looked up, so the parsed entries are exercised, not just stored.  Name
 * lookups from the hosts table answer synchronously, so no event loop or
 * network is needed.  Built by tests/fuzz/run.sh, never by automake. */
#define _GNU_SOURCE
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static char path[64];

static void
remove_file (void)
{
  unlink (path);
}

static void
on_answer (int result, struct evutil_addrinfo *res, void *arg)
{
  (void) result;
  (void) arg;
  if (res)
    evutil_freeaddrinfo (res);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (path[0] == '\0')
    {
      snprintf (path, sizeof path, "/dev/shm/fuzz-hosts.%d", (int) getpid ());
      atexit (remove_file);
    }
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    abort ();
  if (size > 0 && write (fd, data, size) != (ssize_t) size)
    abort ();
  close (fd);

  struct event_base *base = event_base_new ();
  struct evdns_base *dns = evdns_base_new (base, 0);
  if (base == NULL || dns == NULL)
    abort ();
  (void) evdns_base_load_hosts (dns, path);

  char name[64] = "localhost";
  size_t i = 0;
  while (i < size && i < sizeof name - 1 && data[i] > ' ' && data[i] < 0x7f && data[i] != '#')
    i++;
  if (i > 0)
    {
      memcpy (name, data, i);
      name[i] = '\0';
    }
  struct evutil_addrinfo hints;
  memset (&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  struct evdns_getaddrinfo_request *req = evdns_getaddrinfo (dns, name, "443", &hints, on_answer, NULL);
  /* A name the hosts table lacks becomes a pending query (there is no
   * nameserver): cancel it and let the loop deliver the cancellation, or
   * its state is never freed. */
  if (req)
    evdns_getaddrinfo_cancel (req);
  event_base_loop (base, EVLOOP_NONBLOCK);
  evdns_base_free (dns, 1);
  event_base_loop (base, EVLOOP_NONBLOCK);
  event_base_free (base);
  return 0;
}

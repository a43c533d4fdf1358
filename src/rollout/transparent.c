/* transparent.c - routes and nftables rules of transparent egress inside
 * the container's network namespace (see transparent.h).
 * Source: nft(8) (redirect, reject, ct direction), libnftables(3). */
#define _GNU_SOURCE
#include "transparent.h"
#include "../base/util.h"
#include "../linux/netlink.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* Replies (the helper's packets back to the redirected client) pass;
 * anything else that would leave loopback after the redirect (UDP other
 * than DNS, ICMP, a protocol of its own) is refused. */
static const char ruleset[] = "table inet proctor {\n"
                              " chain nat_out {\n"
                              "  type nat hook output priority -100; policy accept;\n"
                              "  udp dport 53 redirect to :53\n"
                              "  tcp dport 53 redirect to :53\n"
                              "  meta l4proto tcp ip daddr != 127.0.0.0/8 redirect to :3127\n"
                              "  meta l4proto tcp ip6 daddr != ::1 redirect to :3127\n"
                              " }\n"
                              " chain filter_out {\n"
                              "  type filter hook output priority 0; policy accept;\n"
                              "  ct direction reply accept\n"
                              "  ip daddr != 127.0.0.0/8 reject\n"
                              "  ip6 daddr != ::1 reject\n"
                              " }\n"
                              "}\n";

/* The four calls of libnftables(3) used, looked up at run time. */
struct nft_api
{
  void *(*ctx_new) (unsigned int flags);
  void (*ctx_free) (void *ctx);
  int (*buffer_error) (void *ctx);
  const char *(*get_error_buffer) (void *ctx);
  int (*run_cmd_from_buffer) (void *ctx, const char *buf);
};

static int
load_nft (void **lib, struct nft_api *api, pr_error **err)
{
  *lib = dlopen ("libnftables.so.1", RTLD_NOW | RTLD_LOCAL);
  if (*lib == NULL)
    return pr_error_set (err, ENOENT, "transparent egress: libnftables.so.1 is not installed (%s)", dlerror ());
  api->ctx_new = (void *(*) (unsigned int)) dlsym (*lib, "nft_ctx_new");
  api->ctx_free = (void (*) (void *)) dlsym (*lib, "nft_ctx_free");
  api->buffer_error = (int (*) (void *)) dlsym (*lib, "nft_ctx_buffer_error");
  api->get_error_buffer = (const char *(*) (void *)) dlsym (*lib, "nft_ctx_get_error_buffer");
  api->run_cmd_from_buffer = (int (*) (void *, const char *)) dlsym (*lib, "nft_run_cmd_from_buffer");
  if (!api->ctx_new || !api->ctx_free || !api->buffer_error || !api->get_error_buffer || !api->run_cmd_from_buffer)
    return pr_error_set (err, ENOENT, "transparent egress: libnftables.so.1 lacks the nft_ctx API");
  return 0;
}

static int
load_rules (pr_error **err)
{
  void *lib = NULL;
  struct nft_api api = { 0 };
  int ret = -1;

  if (load_nft (&lib, &api, err) < 0)
    goto out;
  void *ctx = api.ctx_new (0 /* NFT_CTX_DEFAULT */);
  if (ctx == NULL)
    {
      pr_error_set (err, ENOMEM, "transparent egress: nft_ctx_new");
      goto out;
    }
  api.buffer_error (ctx);
  if (api.run_cmd_from_buffer (ctx, ruleset) != 0)
    {
      _cleanup_free_ char *msg = xstrdup (api.get_error_buffer (ctx) ? api.get_error_buffer (ctx) : "");
      msg[strcspn (msg, "\n")] = '\0';
      pr_error_set (err, EINVAL, "transparent egress: loading the nftables rules failed: %s", msg);
    }
  else
    ret = 0;
  api.ctx_free (ctx);
out:
  if (lib)
    dlclose (lib);
  return ret;
}

int
pr_transparent_setup_netns (pr_error **err)
{
  if (pr_netlink_local_default_route (AF_INET, err) < 0)
    return -1;
  pr_error *e6 = NULL;
  if (pr_netlink_local_default_route (AF_INET6, &e6) < 0)
    {
      /* A namespace without IPv6 (ipv6.disable=1, or lo without ::1):
       * nothing to lead away over it. */
      bool absent = e6->errnum == EAFNOSUPPORT || e6->errnum == EADDRNOTAVAIL || e6->errnum == ENODEV;
      if (!absent)
        {
          *err = e6;
          return -1;
        }
      pr_error_free (&e6);
    }
  return load_rules (err);
}

/* transparent.c - routes and nftables rules of transparent egress inside
 * the container's network namespace (see transparent.h).
 * Source: nft(8) (tproxy, notrack, redirect, reject, socket cgroupv2),
 * libnftables(3); the kernel's Documentation/networking/tproxy.rst. */
#define _GNU_SOURCE
#include "transparent.h"
#include "../base/log.h"
#include "../base/util.h"
#include "../linux/netlink.h"
#include "../cgroup/cgroup.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

/* The rule that marks the packets of sockets created in cgroup g with
 * mark ("" when g has no path).  nft's `socket cgroupv2` looks at the
 * sending socket, which only the output hook still has: the prerouting
 * rules below see the packet after loopback, with the mark. */
static char *
phase_mark (const struct pr_transparent_vcg *g, unsigned mark)
{
  if (g->nft_path == NULL)
    return xstrdup ("");
  return xasprintf ("  socket cgroupv2 level %u \"%s\" meta mark set 0x%x\n", g->level, g->nft_path, mark);
}

/* The rule that puts the UDP packets of sockets created in cgroup g in
 * conntrack zone zone ("" when g has no path).  At raw priority, before
 * conntrack looks the packet up: the mark (set at mangle) comes too late
 * for that, so the cgroup is matched here again. */
static char *
phase_zone (const struct pr_transparent_vcg *g, unsigned zone)
{
  if (g->nft_path == NULL)
    return xstrdup ("");
  return xasprintf ("  meta l4proto udp socket cgroupv2 level %u \"%s\" ct zone set %u\n", g->level, g->nft_path, zone);
}

/* The rules, one table (the comments in the text say why each is there).
 *
 * TCP: no NAT.  The local default routes deliver every destination over
 * lo, and at prerouting a tproxy statement hands the connection to the
 * helper's transparent listener of the sending phase (by the mark set at
 * output), which reads the original destination as the accepted socket's
 * own address.  tproxy picks only sockets with IP_TRANSPARENT, so a
 * listener of the agent's, on any address, is never chosen; whatever no
 * listener takes is dropped, never delivered to a local socket.  TCP is
 * untracked (notrack): the NAT redirect this replaced turned connection
 * tracking on for every packet of the namespace, 10-15% of a download's
 * throughput here (docs/performance.md "The transparent egress path").
 *
 * UDP: DNS only, redirected (NAT, so tracked) to the phase's resolver on
 * 127.0.0.1 or [::1], whose answers come back from the address asked;
 * other UDP, ICMP and any other protocol that would leave loopback are
 * refused.  Each phase's UDP is tracked in a conntrack zone of its own
 * (agent 0, verifier PR_TRANSPARENT_ZONE_VERIFIER, setup ..._SETUP; a
 * resolver's answers in its phase's zone, by their source port): the
 * redirect is chosen on a flow's first packet, and all phases send from
 * the same address to the same nameserver, so without zones a verifier
 * query from a source port one of the agent's recent queries used
 * followed the agent's entry to the agent's resolver and was judged by
 * the agent's policy (an attacker's trial of 2026-12-03).  The helper's own sockets carry PR_TRANSPARENT_MARK_HELPER
 * and pass untouched. */
static char *
ruleset (const struct pr_transparent_cgroups *cg)
{
  _cleanup_free_ char *v = phase_mark (&cg->verifier, PR_TRANSPARENT_MARK_VERIFIER);
  _cleanup_free_ char *st = phase_mark (&cg->setup, PR_TRANSPARENT_MARK_SETUP);
  _cleanup_free_ char *vz = phase_zone (&cg->verifier, PR_TRANSPARENT_ZONE_VERIFIER);
  _cleanup_free_ char *sz = phase_zone (&cg->setup, PR_TRANSPARENT_ZONE_SETUP);
  const unsigned vzn = PR_TRANSPARENT_ZONE_VERIFIER, szn = PR_TRANSPARENT_ZONE_SETUP;
  const unsigned h = PR_TRANSPARENT_MARK_HELPER, vm = PR_TRANSPARENT_MARK_VERIFIER, sm = PR_TRANSPARENT_MARK_SETUP;
  const int ap = PR_TRANSPARENT_PORT, vp = PR_TRANSPARENT_VERIFIER_PORT, sp = PR_TRANSPARENT_SETUP_PORT;
  const int ad = PR_TRANSPARENT_DNS_PORT, vd = PR_TRANSPARENT_VERIFIER_DNS_PORT, sd = PR_TRANSPARENT_SETUP_DNS_PORT;
  return xasprintf (
      "table inet proctor {\n"
      " chain raw_out {\n"
      "  type filter hook output priority raw; policy accept;\n"
      "  meta l4proto tcp notrack\n"
      "%s%s"
      "  meta mark 0x%x udp sport %d ct zone set %u\n"
      "  meta mark 0x%x udp sport %d ct zone set %u\n"
      " }\n"
      " chain raw_pre {\n"
      "  type filter hook prerouting priority raw; policy accept;\n"
      "  meta l4proto tcp notrack\n"
      " }\n"
      /* Who sent it: the helper (its own mark, kept), a verifier or setup
       * session (their cgroup), or else the agent (mark 0, whatever the
       * socket had). */
      " chain mark_out {\n"
      "  type filter hook output priority mangle; policy accept;\n"
      "  meta mark 0x%x return\n"
      "  meta mark set 0\n"
      "%s%s"
      " }\n"
      " chain nat_out {\n"
      "  type nat hook output priority -100; policy accept;\n"
      "  meta mark 0x%x udp dport 53 redirect to :%d\n"
      "  meta mark 0x%x udp dport 53 redirect to :%d\n"
      "  meta mark 0 udp dport 53 redirect to :%d\n"
      " }\n"
      " chain filter_out {\n"
      "  type filter hook output priority 0; policy accept;\n"
      "  meta mark 0x%x accept\n"
      /* Every address is local here, so the agent can bind the
       * nameserver's address and port 53 and spray forged answers at a
       * resolver socket connected to it (its port is in /proc/net/udp;
       * an attacker's trial of 2026-12-04).  Real answers leave the
       * helper from its own ports and get source port 53 only after
       * this hook (the redirect undone at postrouting); queries to port
       * 53 never reach a socket of the agent's (redirected above), so
       * nothing legitimate sends from UDP port 53. */
      "  udp sport 53 drop\n"
      "  ct direction reply accept\n"
      /* DNS over TCP is not served: refused at once (a resolver falls
       * back to it only for answers too long for UDP, which stand-ins
       * never are), never left to a listener of the agent's.  With an
       * ICMP error, not a reset: a reset to a client's outside source
       * address would come back through the tproxy rule below and be
       * handed to the helper's listener, and the client would hang (a
       * trial's finding); ICMP passes that chain, and port-unreachable
       * fails a SYN_SENT socket at once (ECONNREFUSED). */
      "  tcp dport 53 reject with icmpx port-unreachable\n"
      /* The helper's ports take only what tproxy hands them: dialled
       * directly (a loopback destination), the verifier's would judge
       * the agent as the verifier. */
      "  ip daddr 127.0.0.0/8 tcp dport { %d, %d, %d } reject with tcp reset\n"
      "  ip6 daddr ::1 tcp dport { %d, %d, %d } reject with tcp reset\n"
      "  udp dport { %d, %d } ct status & dnat == 0 reject\n"
      "  meta l4proto tcp accept\n"
      /* The rules' own errors (the TCP 53 refusal above) go back to a
       * client whose address is an outside one; nothing leaves the
       * namespace, it has no interface but lo. */
      "  icmp type destination-unreachable accept\n"
      "  icmpv6 type destination-unreachable accept\n"
      "  ip daddr != 127.0.0.0/8 reject\n"
      "  ip6 daddr != ::1 reject\n"
      " }\n"
      " chain divert {\n"
      "  type filter hook prerouting priority mangle; policy accept;\n"
      "  meta mark 0x%x accept\n"
      "  meta l4proto != tcp accept\n"
      "  ip daddr 127.0.0.0/8 accept\n"
      "  ip6 daddr ::1 accept\n"
      "  meta mark 0x%x meta nfproto ipv4 meta l4proto tcp tproxy ip to 127.0.0.1:%d accept\n"
      "  meta mark 0x%x meta nfproto ipv6 meta l4proto tcp tproxy ip6 to [::1]:%d accept\n"
      "  meta mark 0x%x meta nfproto ipv4 meta l4proto tcp tproxy ip to 127.0.0.1:%d accept\n"
      "  meta mark 0x%x meta nfproto ipv6 meta l4proto tcp tproxy ip6 to [::1]:%d accept\n"
      "  meta mark 0 meta nfproto ipv4 meta l4proto tcp tproxy ip to 127.0.0.1:%d accept\n"
      "  meta mark 0 meta nfproto ipv6 meta l4proto tcp tproxy ip6 to [::1]:%d accept\n"
      "  drop\n"
      " }\n"
      "}\n",
      vz, sz, h, vd, vzn, h, sd, szn, h, v, st, vm, vd, sm, sd, ad, h, ap, vp, sp, ap, vp, sp, vd, sd, h, vm, vp, vm, vp, sm, sp, sm, sp, ap, ap);
}

/* The off switch, for every message about what transparent egress lacks. */
#define OFF_SWITCH "(or turn transparent egress off: \"network\": {\"transparent\": false})"

/* A phase's cgroup is a sibling of the container's (PATH-proctor-verifier,
 * pr_cgroup_sibling_path), never a child: an agent process that makes a user namespace and a cgroup
 * namespace of its own can mount cgroup2 rooted at its own cgroup (the
 * container's) and, as uid 0 of a map that covers host uid 0, write a
 * child's cgroup.procs; a sibling is outside every mount it can make
 * (found by a trial: the agent joined proctor-verifier and got the
 * verifier's way out). */
void
pr_transparent_remove_phase_cgroups (const char *cgroup_path)
{
  static const char *const names[] = { PR_TRANSPARENT_VERIFIER_CGROUP, PR_TRANSPARENT_SETUP_CGROUP };
  _cleanup_free_ char *base = NULL;
  _cleanup_error_ pr_error *e = NULL;
  /* Every container's delete comes here: one mountinfo read (for the
   * cgroup2 mount) and a stat per phase for one that never had them. */
  if (pr_cgroup_unified_dir (cgroup_path, &base, &e) < 0)
    return;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    {
      _cleanup_free_ char *dir = pr_cgroup_sibling_path (base, names[i]);
      if (access (dir, F_OK) < 0)
        continue;
      /* pr_cgroup_destroy kills what is left first: on a cgroup2-only host
       * a running session is in its phase cgroup only, and no other
       * teardown reaches it, the cgroup not being the container's child. */
      _cleanup_free_ char *sub = pr_cgroup_sibling_path (cgroup_path, names[i]);
      if (pr_cgroup_destroy (sub, &e) < 0)
        {
          pr_warn ("transparent egress: %s", e->msg);
          pr_error_free (&e);
        }
    }
}

int
pr_transparent_phase_cgroup (const char *cgroup_path, const char *name, struct pr_transparent_vcg *out,
                             pr_error **err)
{
  static const char root[] = "/sys/fs/cgroup/";
  _cleanup_free_ char *dir = NULL;
  out->nft_path = NULL;
  out->level = 0;
  _cleanup_free_ char *sub = pr_cgroup_sibling_path (cgroup_path, name);
  if (pr_cgroup_unified_dir (sub, &dir, err) < 0)
    return pr_error_wrap (err, "transparent egress: the cgroup %s " OFF_SWITCH, name);
  if (strncmp (dir, root, sizeof root - 1) != 0)
    return pr_error_set (err, ENOTSUP, "transparent egress: cgroup2 is not mounted under /sys/fs/cgroup (%s) " OFF_SWITCH,
                         dir);
  if (mkdir (dir, 0755) < 0 && errno != EEXIST)
    return pr_error_set (err, errno, "transparent egress: mkdir %s " OFF_SWITCH, dir);
  /* The depth below the cgroup2 root: the components of the cgroup path
   * (a hybrid host's "unified/" prefix is the mount, not a level). */
  for (const char *c = sub; *c; c++)
    if (*c == '/' && c[1] != '/' && c[1] != '\0')
      out->level++;
  if (sub[0] != '/')
    out->level++;
  out->nft_path = xstrdup (dir + sizeof root - 1);
  return 0;
}

/* The four calls of libnftables(3) used, looked up at run time. */
struct nft_api
{
  void *(*ctx_new) (unsigned int flags);
  void (*ctx_free) (void *ctx);
  int (*buffer_error) (void *ctx);
  const char *(*get_error_buffer) (void *ctx);
  int (*run_cmd_from_buffer) (void *ctx, const char *buf);
};

/* The one line every failure to load libnftables says: what is missing,
 * where it comes from, and the policy's off switch. */
#define NFT_MISSING                                                                                       \
  "transparent egress needs libnftables.so.1 (Debian/Ubuntu package libnftables1), which %s (%s); "       \
  "install it, or turn transparent egress off with \"network\": {\"transparent\": false} in the policy"

/* RTLD_NODELETE: the library stays mapped after dlclose, so the rules'
 * load later in the same create finds it loaded instead of relocating
 * libnftables, libnftnl, libxtables, libjansson and libgmp a second time
 * (about 2 ms of a rollout's create here; docs/performance.md). */
static int
load_nft (void **lib, struct nft_api *api, pr_error **err)
{
  const char *soname = "libnftables.so.1";
  *lib = dlopen (soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (*lib == NULL)
    return pr_error_set (err, ENOENT, NFT_MISSING, "cannot be loaded", dlerror ());
  api->ctx_new = (void *(*) (unsigned int)) dlsym (*lib, "nft_ctx_new");
  api->ctx_free = (void (*) (void *)) dlsym (*lib, "nft_ctx_free");
  api->buffer_error = (int (*) (void *)) dlsym (*lib, "nft_ctx_buffer_error");
  api->get_error_buffer = (const char *(*) (void *)) dlsym (*lib, "nft_ctx_get_error_buffer");
  api->run_cmd_from_buffer = (int (*) (void *, const char *)) dlsym (*lib, "nft_run_cmd_from_buffer");
  if (!api->ctx_new || !api->ctx_free || !api->buffer_error || !api->get_error_buffer || !api->run_cmd_from_buffer)
    return pr_error_set (err, ENOENT, NFT_MISSING, "lacks the nft_ctx API", soname);
  return 0;
}

int
pr_transparent_available (pr_error **err)
{
  void *lib = NULL;
  struct nft_api api = { 0 };
  int r = load_nft (&lib, &api, err);
  if (lib)
    dlclose (lib);
  return r;
}

/* nft's error buffer repeats the offending rule and a caret line after
 * each "Error:" line, and may start with a newline: the one line a user
 * needs is the first that says "Error" (else the first non-empty one),
 * returned in a static buffer. */
static const char *
first_error_line (const char *buf)
{
  static char line[256];
  const char *pick = NULL;
  for (const char *p = buf; *p; p += strcspn (p, "\n"), p += *p == '\n')
    {
      size_t n = strcspn (p, "\n");
      if (n == 0)
        continue;
      if (pick == NULL || memmem (p, n, "Error", 5) != NULL)
        pick = p;
      if (memmem (p, n, "Error", 5) != NULL)
        break;
    }
  if (pick == NULL)
    return "(nft said nothing)";
  snprintf (line, sizeof line, "%.*s", (int) strcspn (pick, "\n"), pick);
  return line;
}

static int
load_rules (const struct pr_transparent_cgroups *cg, pr_error **err)
{
  void *lib = NULL;
  struct nft_api api = { 0 };
  _cleanup_free_ char *rules = ruleset (cg);
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
  if (api.run_cmd_from_buffer (ctx, rules) != 0)
    {
      const char *buf = api.get_error_buffer (ctx);
      pr_error_set (err, EINVAL, "transparent egress: loading the nftables rules failed: %s " OFF_SWITCH,
                    first_error_line (buf ? buf : ""));
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
pr_transparent_enter_phase_cgroup (const char *cgroup_path, const char *name, pid_t pid, pr_error **err)
{
  _cleanup_free_ char *dir = NULL;
  _cleanup_free_ char *sub = pr_cgroup_sibling_path (cgroup_path, name);
  if (pr_cgroup_unified_dir (sub, &dir, err) < 0)
    return pr_error_wrap (err, "transparent egress: the cgroup %s", name);
  _cleanup_free_ char *procs = xasprintf ("%s/cgroup.procs", dir);
  char text[16];
  int n = snprintf (text, sizeof text, "%d", pid);
  int fd = open (procs, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return pr_error_set (err, errno, "open %s", procs);
  ssize_t w = write (fd, text, (size_t) n);
  int e = errno;
  close (fd);
  if (w != n)
    return pr_error_set (err, e, "write %s", procs);
  return 0;
}

int
pr_transparent_setup_netns (const struct pr_transparent_cgroups *cg, pr_error **err)
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
  return load_rules (cg, err);
}

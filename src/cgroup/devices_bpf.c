/* devices_bpf.c - the cgroup2 device filter: linux.resources.devices
 * compiled to a small BPF_PROG_TYPE_CGROUP_DEVICE program (hand-assembled,
 * no libbpf) and attached to the container's cgroup with raw bpf(2).
 *
 * The program sees struct bpf_cgroup_dev_ctx {access_type, major, minor}
 * where access_type = (BPF_DEVCG_ACC_* << 16) | BPF_DEVCG_DEV_*, and
 * returns 1 to allow.  Rules are tested last to first, so the first hit is
 * the spec's last matching rule; no hit denies.
 * Source: include/uapi/linux/bpf.h (struct bpf_cgroup_dev_ctx,
 * BPF_CGROUP_DEVICE), Documentation/bpf/classic_vs_extended.rst (insn
 * encoding), kernel/bpf/cgroup.c (BPF_F_ALLOW_MULTI, BPF_PROG_QUERY). */
#define _GNU_SOURCE
#include "cgroup-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <string.h>
#include <unistd.h>

#include "../base/log.h"
#include "../base/syscall.h"
#include "../base/util.h"

#define R0 0
#define R1 1
#define R2 2
#define R3 3
#define R4 4
#define R5 5

struct prog
{
  struct bpf_insn *insn;
  size_t n;
};

static void
emit (struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
  p->insn = xrealloc (p->insn, (p->n + 1) * sizeof *p->insn);
  struct bpf_insn *i = &p->insn[p->n++];
  memset (i, 0, sizeof *i);
  i->code = code;
  i->dst_reg = dst;
  i->src_reg = src;
  i->off = off;
  i->imm = imm;
}

/* Placeholder offset of a "skip to next rule" jump, patched per block. */
#define NEXT_RULE INT16_MIN

static int
access_bits (const char *access)
{
  int bits = 0;
  for (const char *a = access; *a; a++)
    bits |= *a == 'm' ? BPF_DEVCG_ACC_MKNOD : *a == 'r' ? BPF_DEVCG_ACC_READ : BPF_DEVCG_ACC_WRITE;
  return bits;
}

/* One rule: fall through its tests to "return allow", each failed test
 * jumps past the block. */
static void
emit_rule (struct prog *p, const struct pr_dev_rule *r)
{
  size_t start = p->n;
  if (r->type != 'a')
    {
      emit (p, BPF_JMP | BPF_JNE | BPF_K, R2, 0, NEXT_RULE, r->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR);
      if (r->major >= 0)
        emit (p, BPF_JMP | BPF_JNE | BPF_K, R4, 0, NEXT_RULE, (int32_t) r->major);
      if (r->minor >= 0)
        emit (p, BPF_JMP | BPF_JNE | BPF_K, R5, 0, NEXT_RULE, (int32_t) r->minor);
    }
  int bits = access_bits (r->access);
  if (bits != (BPF_DEVCG_ACC_MKNOD | BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE))
    {
      /* the rule covers the request only if no requested bit is outside */
      emit (p, BPF_ALU64 | BPF_MOV | BPF_X, R1, R3, 0, 0);
      emit (p, BPF_ALU64 | BPF_AND | BPF_K, R1, 0, 0, ~bits);
      emit (p, BPF_JMP | BPF_JNE | BPF_K, R1, 0, NEXT_RULE, 0);
    }
  emit (p, BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, r->allow ? 1 : 0);
  emit (p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
  for (size_t i = start; i < p->n; i++)
    if (p->insn[i].off == NEXT_RULE)
      p->insn[i].off = (int16_t) (p->n - (i + 1));
}

static void
build (struct prog *p, const struct pr_dev_rule *rules, size_t n)
{
  /* r2 = type, r3 = access, r4 = major, r5 = minor (ctx in r1) */
  emit (p, BPF_LDX | BPF_MEM | BPF_W, R2, R1, 0, 0);
  emit (p, BPF_ALU64 | BPF_AND | BPF_K, R2, 0, 0, 0xffff);
  emit (p, BPF_LDX | BPF_MEM | BPF_W, R3, R1, 0, 0);
  emit (p, BPF_ALU64 | BPF_RSH | BPF_K, R3, 0, 0, 16);
  emit (p, BPF_LDX | BPF_MEM | BPF_W, R4, R1, 4, 0);
  emit (p, BPF_LDX | BPF_MEM | BPF_W, R5, R1, 8, 0);
  for (size_t i = n; i-- > 0;)
    {
      emit_rule (p, &rules[i]);
      /* a wildcard rule decides everything: code after it would be
       * unreachable, which the verifier rejects */
      if (rules[i].type == 'a' && access_bits (rules[i].access) == 7)
        return;
    }
  emit (p, BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, 0);
  emit (p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

static int
load_prog (const struct prog *p, int *fd_out, pr_error **err)
{
  static char log[4096];
  union bpf_attr attr;
  memset (&attr, 0, sizeof attr);
  attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  attr.insns = (uint64_t) (uintptr_t) p->insn;
  attr.insn_cnt = (uint32_t) p->n;
  attr.license = (uint64_t) (uintptr_t) "Apache";
  attr.log_buf = (uint64_t) (uintptr_t) log;
  attr.log_size = sizeof log;
  attr.log_level = 1;
  log[0] = '\0';
  int fd = (int) pr_sys_bpf (BPF_PROG_LOAD, &attr, sizeof attr);
  if (fd < 0 && errno == ENOSPC)
    {
      /* a log too small for the verifier is not a program error */
      attr.log_buf = 0;
      attr.log_size = 0;
      attr.log_level = 0;
      fd = (int) pr_sys_bpf (BPF_PROG_LOAD, &attr, sizeof attr);
    }
  if (fd < 0)
    {
      log[strcspn (log, "\n")] = '\0';
      return pr_error_set (err, errno, "load cgroup device filter (%zu insns)%s%s", p->n, log[0] ? ": " : "", log);
    }
  *fd_out = fd;
  return 0;
}

/* Ids of the device programs attached to the cgroup itself. */
static int
query (int cgfd, uint32_t *ids, uint32_t *n, pr_error **err)
{
  union bpf_attr attr;
  memset (&attr, 0, sizeof attr);
  attr.query.target_fd = cgfd;
  attr.query.attach_type = BPF_CGROUP_DEVICE;
  attr.query.prog_ids = (uint64_t) (uintptr_t) ids;
  attr.query.prog_cnt = *n;
  if (pr_sys_bpf (BPF_PROG_QUERY, &attr, sizeof attr) < 0)
    return pr_error_set (err, errno, "query cgroup device programs");
  *n = attr.query.prog_cnt;
  return 0;
}

int
pr_cgroup_devices_bpf (const char *dir, const struct pr_dev_rule *rules, size_t n, pr_error **err)
{
  _cleanup_close_ int cgfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cgfd < 0)
    return pr_error_set (err, errno, "open cgroup `%s`", dir);

  uint32_t old[64];
  uint32_t n_old = PR_ARRAY_SIZE (old);
  if (query (cgfd, old, &n_old, err) < 0)
    return -1;

  struct prog p = { 0 };
  build (&p, rules, n);
  _cleanup_close_ int progfd = -1;
  int r = load_prog (&p, &progfd, err);
  free (p.insn);
  if (r < 0)
    return -1;

  /* New filter in before the old ones leave: no window without one. */
  union bpf_attr attr;
  memset (&attr, 0, sizeof attr);
  attr.target_fd = cgfd;
  attr.attach_bpf_fd = progfd;
  attr.attach_type = BPF_CGROUP_DEVICE;
  attr.attach_flags = BPF_F_ALLOW_MULTI;
  if (pr_sys_bpf (BPF_PROG_ATTACH, &attr, sizeof attr) < 0)
    return pr_error_set (err, errno, "attach device filter to cgroup `%s`", dir);

  for (uint32_t i = 0; i < n_old; i++)
    {
      memset (&attr, 0, sizeof attr);
      attr.prog_id = old[i];
      _cleanup_close_ int ofd = (int) pr_sys_bpf (BPF_PROG_GET_FD_BY_ID, &attr, sizeof attr);
      if (ofd < 0)
        continue; /* gone meanwhile */
      memset (&attr, 0, sizeof attr);
      attr.target_fd = cgfd;
      attr.attach_bpf_fd = ofd;
      attr.attach_type = BPF_CGROUP_DEVICE;
      if (pr_sys_bpf (BPF_PROG_DETACH, &attr, sizeof attr) < 0)
        pr_warn ("cgroup: detach old device filter %u from `%s`: %s", old[i], dir, strerror (errno));
    }
  return 0;
}

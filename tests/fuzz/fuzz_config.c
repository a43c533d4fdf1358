/* fuzz_config.c - libFuzzer target for the config.json parser: the input is
 * a whole config.json, fed to pr_config_parse (typed OCI config, runtime-spec
 * 1.2) and, as a process document, to pr_process_parse (`exec --process`).
 * Any input must give 0 or -1 with an error, never a crash, leak or UB.
 * Built by tests/fuzz/run.sh, never by automake. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <yajl/yajl_tree.h>

#include "base/error.h"
#include "config/config.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  /* The parsers take (data, len); a private copy without a terminator
   * lets ASan catch any read past len. */
  char *buf = malloc (size ? size : 1);
  if (buf == NULL)
    return 0;
  for (size_t i = 0; i < size; i++)
    buf[i] = (char) data[i];

  struct pr_config *cfg = NULL;
  pr_error *err = NULL;
  if (pr_config_parse (buf, size, &cfg, &err) == 0)
    {
      (void) pr_config_annotation (cfg, "run.proctor.rollout");
      pr_config_free (cfg);
    }
  else
    pr_error_free (&err);

  struct pr_process p = { 0 };
  yajl_val tree = NULL;
  if (pr_process_parse (buf, size, &p, &tree, &err) == 0)
    {
      pr_process_free_contents (&p);
      if (tree)
        yajl_tree_free (tree);
    }
  else
    pr_error_free (&err);
  free (buf);
  return 0;
}

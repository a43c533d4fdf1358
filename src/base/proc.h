/* proc.h - facts about a process read from /proc/PID (proc(5)): its start
 * time, which tells a live process from a later one that was given the
 * same pid after the first exited.  Used by the lifecycle (state.json's
 * pid) and the rollout network (its egress helper's pid file). */
#ifndef PROCTOR_PROC_H
#define PROCTOR_PROC_H

#include <sys/types.h>

/* Reads the start time of pid: field 22 (starttime) of /proc/PID/stat, in
 * clock ticks since boot (sysconf (_SC_CLK_TCK)).  Returns that value, or
 * 0 when pid <= 0, the process is gone (no /proc entry), is a zombie
 * (state Z) or dead (X), or the file cannot be read or parsed; 0 never
 * names a live process, so callers compare it with a start time saved
 * earlier.  Source: proc(5) "/proc/pid/stat". */
unsigned long long pr_proc_start_time (pid_t pid);

#endif

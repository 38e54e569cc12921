/* idle_thread.c: LD_PRELOAD library that starts one thread, which only waits.
 * rotate.sh's perftest+thread variant: perftest's processes then have the
 * second thread that fabench-lat's have (the heartbeat), and with it glibc's
 * cancellable system-call path and the kernel's shared file table.
 * With FABENCH_IDLE_THREAD_FILES=own (variant perftest+thread-files) the
 * thread first takes a file table of its own (unshare(CLONE_FILES)): the
 * main thread's table is then unshared again, and of the two costs only
 * glibc's remains. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *idle(void *arg) {
  if (arg) (void)unshare(CLONE_FILES);
  for (;;) pause();
  return 0;
}

__attribute__((constructor)) static void start_idle_thread(void) {
  const char *files = getenv("FABENCH_IDLE_THREAD_FILES");
  void *own = (files && strcmp(files, "own") == 0) ? (void *)1 : 0;
  pthread_t t;
  if (pthread_create(&t, 0, idle, own) == 0) pthread_detach(t);
}

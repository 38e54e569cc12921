/* idle_thread.c: LD_PRELOAD library that starts one thread, which only waits.
 * rotate.sh's perftest+thread variant: perftest's processes then have the
 * second thread that fabench-lat's have (the heartbeat), and with it glibc's
 * cancellable system-call path and the kernel's shared file table. */
#include <pthread.h>
#include <unistd.h>

static void *idle(void *arg) {
  (void)arg;
  for (;;) pause();
  return 0;
}

__attribute__((constructor)) static void start_idle_thread(void) {
  pthread_t t;
  if (pthread_create(&t, 0, idle, 0) == 0) pthread_detach(t);
}

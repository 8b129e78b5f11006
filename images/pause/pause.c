/*
 * The pod sandbox's process for the local cluster (hack/local-cluster.sh): it holds the pod's
 * namespaces, reaps the zombies of processes that exit inside them, and exits at SIGINT or SIGTERM.
 * Built static so that its image is this one file.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) {
  (void)sig;
  _exit(0);
}

static void reap(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction stopping = {.sa_handler = stop};
  struct sigaction reaping = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP | SA_RESTART};
  if (sigaction(SIGINT, &stopping, NULL) < 0 || sigaction(SIGTERM, &stopping, NULL) < 0 ||
      sigaction(SIGCHLD, &reaping, NULL) < 0) {
    return 1;
  }
  for (;;) {
    pause();
  }
}

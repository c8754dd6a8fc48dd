/* pool: fork, supervise, restart, stop. */
#include "pool.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define POOL_MAX 256

static volatile sig_atomic_t stopping;

static void
on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

static pid_t
worker_start(int listen_fd, int (*serve)(int))
{
	pid_t pid = fork();

	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		_exit(serve(listen_fd));
	}
	if (pid < 0)
		log_msg(NULL, "error", "pool: fork failed: %s", strerror(errno));
	return pid;
}

int
pool_run(int listen_fd, int workers, int (*serve)(int listen_fd))
{
	pid_t pids[POOL_MAX];
	struct sigaction sa;
	int i, status;

	if (workers < 1)
		workers = 1;
	if (workers > POOL_MAX)
		workers = POOL_MAX;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;	/* no SA_RESTART: waitpid must return on a signal */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	for (i = 0; i < workers; i++)
		pids[i] = worker_start(listen_fd, serve);
	while (!stopping) {
		pid_t dead = waitpid(-1, &status, 0);

		if (dead < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < workers; i++) {
			if (pids[i] != dead)
				continue;
			if (!stopping) {
				log_msg(NULL, "warn", "pool: worker %ld ended (status %d); restarting",
				    (long)dead, status);
				/* a worker that dies at once must not turn into a fork loop */
				sleep(1);
				pids[i] = worker_start(listen_fd, serve);
			}
		}
	}
	for (i = 0; i < workers; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGTERM);
	for (i = 0; i < workers; i++)
		if (pids[i] > 0)
			waitpid(pids[i], &status, 0);
	return 0;
}

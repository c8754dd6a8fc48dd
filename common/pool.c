/* pool: fork, supervise, restart, stop. */
#include "pool.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define POOL_MAX	256
#define QUICK_DEATH_MS	1000	/* a worker that dies sooner than this after its start... */
#define BACKOFF_MIN_MS	250	/* ...twice in a row waits this long before the next start, */
#define BACKOFF_MAX_MS	8000	/* doubling each time up to this */
#define POLL_MS		50	/* how often waits are checked while a start is pending */

struct slot {
	pid_t	 pid;		/* 0 while no process runs in the slot */
	int64_t	 started_ms;	/* when pid was started */
	int64_t	 due_ms;	/* pid == 0: when to start the next one */
	int	 quick_deaths;	/* consecutive deaths within QUICK_DEATH_MS of a start */
};

static volatile sig_atomic_t stopping;

static void
on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

int64_t
pool_clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
sleep_ms(int64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);	/* a signal ends it early, which is what a stop wants */
}

static void
worker_start(struct slot *s, int listen_fd, int (*serve)(int))
{
	sigset_t stops, old;
	pid_t pid;

	/* a stop signal that arrives while the child still has the supervisor's handler would
	 * only set the child's copy of `stopping`, and that worker would never end: hold stop
	 * signals until the child has the default action back */
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGINT);
	sigprocmask(SIG_BLOCK, &stops, &old);
	pid = fork();
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		_exit(serve(listen_fd));
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	s->started_ms = pool_clock_ms();
	if (pid < 0) {
		log_msg(NULL, "error", "pool: fork failed: %s", strerror(errno));
		s->pid = 0;
		s->due_ms = s->started_ms + BACKOFF_MIN_MS;
		return;
	}
	s->pid = pid;
}

/* A worker ended: it is started again at once, unless it keeps dying right after its start
 * (a bad setting, a missing library), which would turn the supervisor into a fork loop. */
static void
worker_ended(struct slot *s, pid_t pid, int status)
{
	int64_t now = pool_clock_ms(), delay = 0;

	if (now - s->started_ms < QUICK_DEATH_MS)
		s->quick_deaths++;
	else
		s->quick_deaths = 0;
	if (s->quick_deaths >= 2) {
		int shift = s->quick_deaths - 2 < 5 ? s->quick_deaths - 2 : 5;

		delay = (int64_t)BACKOFF_MIN_MS << shift;
		if (delay > BACKOFF_MAX_MS)
			delay = BACKOFF_MAX_MS;
	}
	s->pid = 0;
	s->due_ms = now + delay;
	if (delay > 0)
		log_msg(NULL, "warn", "pool: worker %ld ended (status %d) %d times in a row right "
		    "after its start; next start in %lld ms", (long)pid, status, s->quick_deaths,
		    (long long)delay);
	else
		log_msg(NULL, "warn", "pool: worker %ld ended (status %d); restarting",
		    (long)pid, status);
}

int
pool_run(int listen_fd, int workers, int (*serve)(int listen_fd))
{
	struct slot slots[POOL_MAX];
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
	memset(slots, 0, sizeof slots);
	for (i = 0; i < workers; i++)
		worker_start(&slots[i], listen_fd, serve);
	while (!stopping) {
		int64_t now = pool_clock_ms(), next_due = -1;
		pid_t dead;

		for (i = 0; i < workers; i++) {
			if (slots[i].pid != 0)
				continue;
			if (slots[i].due_ms <= now)
				worker_start(&slots[i], listen_fd, serve);
			if (slots[i].pid == 0 && (next_due < 0 || slots[i].due_ms < next_due))
				next_due = slots[i].due_ms;
		}
		/* block until a worker ends, or poll while a delayed start is pending */
		dead = waitpid(-1, &status, next_due < 0 ? 0 : WNOHANG);
		if (dead == 0) {
			sleep_ms(next_due - now < POLL_MS ? (next_due > now ? next_due - now : 1) :
			    POLL_MS);
			continue;
		}
		if (dead < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD && next_due >= 0) {
				sleep_ms(POLL_MS);
				continue;
			}
			break;
		}
		for (i = 0; i < workers; i++)
			if (slots[i].pid == dead)
				worker_ended(&slots[i], dead, status);
	}
	for (i = 0; i < workers; i++)
		if (slots[i].pid > 0)
			kill(slots[i].pid, SIGTERM);
	for (i = 0; i < workers; i++)
		if (slots[i].pid > 0)
			waitpid(slots[i].pid, &status, 0);
	return 0;
}

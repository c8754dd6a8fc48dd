/* child: a helper program with its standard input and output on pipes. */
#include "child.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int
child_run(char *const argv[], const char *in, size_t inlen, char *out, size_t outsize)
{
	posix_spawn_file_actions_t fa;
	int to[2] = { -1, -1 }, from[2] = { -1, -1 }, status, err;
	char drop[512];
	size_t len = 0;
	ssize_t n;
	pid_t pid;
	void (*old_pipe)(int);

	if (pipe(to) != 0)
		return -1;
	if (pipe(from) != 0) {
		err = errno;
		close(to[0]);
		close(to[1]);
		errno = err;
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, to[0], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, from[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&fa, to[0]);
	posix_spawn_file_actions_addclose(&fa, to[1]);
	posix_spawn_file_actions_addclose(&fa, from[0]);
	posix_spawn_file_actions_addclose(&fa, from[1]);
	err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(to[0]);
	close(from[1]);
	if (err != 0) {
		close(to[1]);
		close(from[0]);
		errno = err;
		return -1;
	}
	/* a helper that exits before reading all of its input must not kill the caller */
	old_pipe = signal(SIGPIPE, SIG_IGN);
	while (in != NULL && inlen > 0) {
		n = write(to[1], in, inlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		in += n;
		inlen -= (size_t)n;
	}
	close(to[1]);
	signal(SIGPIPE, old_pipe);
	for (;;) {
		bool keep = out != NULL && len + 1 < outsize;

		n = keep ? read(from[0], out + len, outsize - 1 - len) :
		    read(from[0], drop, sizeof drop);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (keep)
			len += (size_t)n;
	}
	close(from[0]);
	if (out != NULL && outsize > 0)
		out[len] = '\0';
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

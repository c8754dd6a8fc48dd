/* pool: a fixed set of FastCGI worker processes on one listening socket, supervised.
 *
 * For mod_proxy_fcgi (Apache's -D FCGIPOOL, `make run MODE=pool`): unlike mod_fcgid, which
 * starts workers on demand and makes a request wait a whole second when none is idle, the
 * pool's workers all exist before the first request and extra requests wait in the socket's
 * backlog. The supervisor restarts a worker that dies at once (with a growing delay only for
 * one that keeps dying right after its start) and, on SIGTERM or SIGINT, stops them all and
 * removes the socket.
 */
#ifndef COURTS_POOL_H
#define COURTS_POOL_H

#include <stdint.h>

/* Runs serve(listen_fd) in `workers` child processes and supervises them until SIGTERM or
 * SIGINT. serve is the worker's whole life (its accept loop); it returns the exit status.
 * Returns the supervisor's exit status. */
int pool_run(int listen_fd, int workers, int (*serve)(int listen_fd));

/* CLOCK_MONOTONIC in milliseconds: the supervisor's clock, and its workers'. */
int64_t pool_clock_ms(void);

#endif

/* log: one line per event on stderr (Apache's error log, cron's mail). */
#ifndef COURTS_LOG_H
#define COURTS_LOG_H

struct req;

/* Writes "<program>[<pid>] req=<id> <level>: <message>" with control characters escaped
 * (the process id tells a pool's workers apart).
 * r may be NULL outside a request. Never pass tokens or whole bodies. */
void log_msg(const struct req *r, const char *level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Sets the program name of log lines and of the database connection (application_name). */
void log_set_program(const char *program);

/* The name set with log_set_program(), "courts" before. */
const char *log_program(void);

#endif

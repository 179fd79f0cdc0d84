/* retry_cli.h — the command line's parts of `oomfix retry` (cmd_retry.c wires them to the loop of
 * oomfix/retry.h): the two runners and the two sinks. */
#ifndef OOMFIX_RETRY_CLI_H
#define OOMFIX_RETRY_CLI_H

#include <stdio.h>

#include "oomfix/retry.h"

/* ---- runners ---- */

/* A file job: CMD runs in a process group of its own, its output shown and written to the try's
 * log; stopping escalates SIGINT, SIGTERM (after `grace` seconds), SIGKILL (retry_proc.c). */
struct retry_proc {
	char **cmd;
	double grace;
};
extern const struct retry_runner_ops retry_proc_ops;

/* A web UI job: queued as the UI's start button does, followed through the database, its
 * log.txt shown and copied to the try's log, stopped with the stop flag (retry_aitk.c). */
struct aitk_db;
struct retry_aitk {
	struct aitk_db *db;
	const char *name;      /* the job's name (after "aitk:") */
};
extern const struct retry_runner_ops retry_aitk_ops;

/* ---- sinks (retry_sinks.c) ---- */

/* The sentences for people, on stderr. */
extern const struct retry_sink_ops retry_text_ops;

/* The JSON events of retry_events.h, one object per line on `fp` (data: the FILE *). */
extern const struct retry_sink_ops retry_json_ops;

/* Says (to the sinks) that the probe has decided and the run is being stopped. */
void retry_say_probe(const struct retry_sinks *s, const struct retry_try *t,
		     const struct retry_probe *p);

/* Writes everything (short writes, EINTR); -1 on error. */
int retry_write_all(int fd, const char *p, size_t n);

/* Seconds on the monotonic clock. */
double retry_now(void);

#endif

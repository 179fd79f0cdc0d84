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

/* The sentences for people, on stderr; data: a struct retry_text, zeroed, that keeps each try
 * for the table of tries said before the closing line of a run of two tries or more. */
extern const struct retry_sink_ops retry_text_ops;

struct retry_text_row {
	int index;             /* the try's place (0: the log given with --log) */
	char *log;             /* its log, malloc'd */
	char verdict[128];     /* "B first steps", "fits", ... ("" until known) */
	long long step;        /* the step it failed at, -1 when none */
	enum fix_id fix;       /* the fix saved after it, FIX_NONE when none */
	int said;              /* the estimate's verdict on the card before it (enum est_verdict;
				* 0: no card or no estimate) */
	bool oom, fitted;      /* it ran out of GPU memory; it finished or passed its probe */
};

struct retry_text {
	struct retry_text_row *rows;
	size_t n, cap;
	int width;             /* the table's width in cells (0: 80) */
};

/* Frees what the text sink kept (the struct itself is the caller's). */
void retry_text_free(struct retry_text *rt);

/* The JSON events of retry_events.h, one object per line on `fp` (data: the FILE *). */
extern const struct retry_sink_ops retry_json_ops;

/* Says (to the sinks) that the probe has decided and the run is being stopped. */
void retry_say_probe(const struct retry_sinks *s, const struct retry_try *t,
		     const struct retry_probe *p);

/* Writes everything (short writes, EINTR); -1 on error. */
int retry_write_all(int fd, const char *p, size_t n);

/* Seconds on the monotonic clock. */
double retry_now(void);

/* Keeps what the run's watch saw of the card, phase by phase (SPEC §12.2; finished: the run
 * ended well), says a problem with the store to the sinks, and frees the watch. */
struct gpuwatch;
void retry_keep_peaks(struct gpuwatch **gw, const struct retry_try *t, bool finished,
		      const struct retry_sinks *sinks);

#endif

/* retry.h — the retry loop run from the UI (retry.c): `oomfix retry --events` as a child, and its
 * tries as its events told them. The UI's side of driving it (the questions, stopping it) is
 * retry_ctl.c's; the Retry view draws it. */
#ifndef OOMFIX_UI_RETRY_H
#define OOMFIX_UI_RETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "oomfix/err.h"
#include "oomfix/retry.h"

/* One try of the loop, as its events told it. */
struct ui_try {
	int n;                      /* the number of its log (N.log); 0: the log the loop started from */
	int index;                  /* 1 for the first run of this loop, 0 for the log started from */
	char *log;                  /* its log, as the retry named it (relative to the working dir) */
	char *estimate;             /* the estimate of the job it runs, in words; NULL when none */
	char *taken;                /* a web UI job: the status the worker gave it; NULL while queued */
	char *waiting;              /* ... still queued after a while: what the worker needs */
	bool judged;                /* its verdict came */
	bool oom;
	char timing[4];             /* "A".."E", "" when no OOM */
	char *summary;              /* the verdict in a few words */
	char *fix, *title, *note, *lesson; /* the fix applied after it (fix NULL when none) */
	char **changes;             /* "path: old → new" */
	size_t nchanges;
};

struct ui_retry {
	pid_t pid;                  /* the `oomfix retry` process, 0 when none runs */
	int ev_fd, err_fd;          /* its events and what it prints for people; -1 once at their end */
	bool started;               /* a loop was started in this session: the Retry tab is shown */
	unsigned loop;              /* counts the loops started: a view tells a new one by it */
	bool stopping;              /* the user asked it to stop */
	char *cmd;                  /* the shell command of a file job, NULL for a web UI job */
	long long probe;
	int max_tries;
	struct ui_try *tries;
	size_t ntries;
	bool ended;                 /* the end event came, or the process is gone */
	int status;                 /* its exit status */
	enum retry_outcome outcome; /* how it ended (retry_events.h), once `ended` */
	char *text;                 /* the end in a sentence (NULL: see ui_retry_last_error) */
	char *line;                 /* an event line still being read */
	size_t len, cap;
	char err[2048];             /* the tail of what it printed for people */
	size_t errlen;
};

/* What ui_retry_poll saw. */
enum {
	UI_RT_TRY = 1u << 0,        /* a try started: its log is the last try's */
	UI_RT_FIX = 1u << 1,        /* a fix was saved: the job changed on disk */
	UI_RT_END = 1u << 2,        /* the process is gone (ended and outcome are set) */
	UI_RT_CHANGED = 1u << 3,    /* anything new to draw */
};

/* Starts `oomfix retry --events 3` for JOB (a path or aitk:NAME) as a child: with `log` it starts
 * from that failed run (--log), `cmd` is the shell command of a file job (NULL for a web UI job),
 * probe 0 for none. The results of an earlier loop are forgotten. */
int ui_retry_start(struct ui_retry *r, const char *job, const char *log, const char *cmd,
		   long long probe, int max_tries, const char *vram, struct err *e);
/* Reads what the child wrote since the last call, without waiting; reaps it when it is gone.
 * Returns UI_RT_* bits. */
unsigned ui_retry_poll(struct ui_retry *r);
bool ui_retry_running(const struct ui_retry *r);
/* Asks the loop to stop (SIGINT): it stops its run first; asking again skips the grace period. */
void ui_retry_stop(struct ui_retry *r);
/* The last line the retry printed for people (its error, when it ended without an outcome). */
void ui_retry_last_error(const struct ui_retry *r, char *buf, size_t sz);
/* Frees what the loop's results hold (the process must be gone). */
void ui_retry_free(struct ui_retry *r);
/* The shell command last used for this job file, or a guess (`cd TOOLKIT && python run.py JOB`
 * when run.py is found in or above the job's folder); malloc'd. */
char *ui_retry_guess_command(const char *job_path);
/* Keeps `cmd` for the next time (JOB.oomfix-runs/command, replaced whole). */
void ui_retry_remember_command(const char *job_path, const char *cmd);
/* Appends "  retry T/M" (the T-th run of at most M) to a header while a retry runs. */
void ui_retry_progress(const struct ui_retry *r, char *buf, size_t sz);

#endif

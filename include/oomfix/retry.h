/* retry.h — the retry loop (SPEC §11): run the job; while a run dies of GPU out-of-memory, apply
 * the first fix for that failure (SPEC §3.4), save it, and run again — one change, then a run.
 *
 * The loop is one state machine over two sets of operations, so that it holds the decisions and
 * nothing else (it never prints, never forks, never reads the database):
 *   a runner — how one try runs: start a file job's command and follow it, or queue a web UI job
 *     and follow the worker through the database. The runner copies the run's output to the
 *     try's log, feeds it to the probe, stops the run once the probe has decided, and says how
 *     the run ended;
 *   sinks — who is told: the sentences for people, the JSON events of retry_events.h (several
 *     sinks can listen at once).
 * The unit tests drive every outcome with a fake runner that writes canned logs.
 */
#ifndef OOMFIX_RETRY_H
#define OOMFIX_RETRY_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oomfix/diag.h"
#include "oomfix/err.h"
#include "oomfix/plan.h"
#include "oomfix/retry_events.h"

struct estimate;
struct job;
struct source;

#define RETRY_DEFAULT_TRIES 6

struct retry_opts {
	const char *job;              /* JOB (a file) or aitk:NAME */
	int max_tries;                /* 1..1000 */
	long long probe;              /* --probe STEPS; 0: no probe */
	const char *from_log;         /* --log: a failed run of the job as it is; its fix comes first */
	volatile sig_atomic_t *stop;  /* counts the stop requests (Ctrl-C, SIGTERM, SIGHUP) */
	int64_t card;                 /* the card's capacity in bytes (--vram, nvidia-smi), 0 when
				       * unknown: then the first OOM message's capacity is used */
	bool ask_smi;                 /* nvidia-smi answers: before each try, ask it what other
				       * processes hold on the job's card (one card, SPEC §12.2) */
};

/* One try, as the runner and the sinks see it. */
struct retry_try {
	int n;                 /* the run's number: its log is <runs folder>/<n>.log; 0: --log */
	int index;             /* its place in this invocation, 1..max_tries (0: --log) */
	int max_tries;
	const char *log;       /* the try's log (for --log, the log given) */
	int logfd;             /* open for writing the run's output (-1 for --log) */
	struct source *src;    /* the job as loaded before the run */
	const struct job *job;
	const struct estimate *est; /* the job's estimate (SPEC §12), NULL for --log */
	int64_t card;          /* the card it is judged on, 0 when unknown */
};

/* ---- the probe: what a run has shown so far, and whether it has shown enough ---------------- */

enum retry_probe_state {
	RETRY_PROBE_WATCHING, /* no probe, or it has not decided yet */
	RETRY_PROBE_PASSED,   /* STEPS steps past the previous failure and through a sampling round */
	RETRY_PROBE_FAILED,   /* an OOM in the probe run (a skip banner): the try failed */
};

/* Read from the run's output as it comes (ANSI codes dropped, split on \r and \n). */
struct retry_probe {
	const char *name;        /* config.name: the training bar's description */
	long long step;          /* completed training steps, -1 before the training bar */
	unsigned rounds;         /* sampling rounds that started during training and completed */
	long long round_step;    /* the step of the last such round, -1 when none */
	bool sampling;           /* a sampling bar is below its total */
	bool sampling_in_training; /* ... and it started after training step 1 */
	long long skip_step;     /* the step of the first OOM skip banner, -1 when none */
	/* the probe itself (steps 0: none) */
	long long steps;         /* --probe STEPS */
	long long prev_fail;     /* the step the previous try failed at (0: before training) */
	long long target;        /* prev_fail + steps */
	long long job_steps;     /* train.steps, 0 when unknown */
	long long sample_every;  /* sample.sample_every, 0 when unknown */
	bool sampling_off;       /* train.disable_sampling: no round is needed */
	bool no_round_coming;    /* sample_every is beyond the job's steps: no round will come */
	enum retry_probe_state state;
	char seg[4096];
	size_t len;
	int esc;                 /* 0 text, 1 after ESC, 2 inside ESC [ ... */
};

/* Starts watching a run of job `j` (NULL: nothing is known about the job); steps is --probe
 * STEPS (0: no probe, only the step is followed), prev_fail the step the previous try failed at. */
void retry_probe_init(struct retry_probe *p, const struct job *j, long long steps,
		      long long prev_fail);

/* Feeds output; returns the probe's state after it. Once PASSED or FAILED it stays so: the
 * runner stops the run then. */
enum retry_probe_state retry_probe_feed(struct retry_probe *p, const char *buf, size_t n);

/* What the probe covered and what it could not (translated), for the closing line. */
void retry_probe_coverage(const struct retry_probe *p, char *buf, size_t sz);

/* ---- the runner -------------------------------------------------------------------------------- */

enum retry_run_end {
	RETRY_RAN,             /* the run ended (by itself, or stopped for the probe): its log decides */
	RETRY_RAN_INTERRUPTED, /* the user stopped the loop (stop requests) */
	RETRY_RAN_STOPPED,     /* stopped from elsewhere (the web UI's stop button) */
	RETRY_RAN_NOT_STARTED, /* the command could not be started */
};

struct retry_try_result {
	enum retry_run_end end;
	bool exited_zero;      /* the command exited 0 (a web UI job: it completed) */
	long long step;        /* the last training step seen, -1 when none */
	char head[512];        /* INTERRUPTED, STOPPED, NOT_STARTED: the line for people (may be "") */
	char text[512];        /* ... and the end's sentence */
};

struct retry_sinks;

struct retry_runner_ops {
	/* Runs try t: its output goes to t->logfd and is fed to `probe`; the run is stopped once
	 * the probe says PASSED or FAILED, or when *stop changes. Returns ERR_OK with *out filled,
	 * or an error code with e set (the loop ends with it). */
	int (*run)(void *runner, const struct retry_try *t, struct retry_probe *probe,
		   const struct retry_sinks *sinks, volatile sig_atomic_t *stop,
		   struct retry_try_result *out, struct err *e);
};

/* ---- the sinks --------------------------------------------------------------------------------- */

struct retry_verdict {
	const struct diag_result *v;
	const char *label;        /* "try 2", "the log given" */
	const char *words;        /* "B: out of memory in training step 5, one of the first" */
	const char *summary;      /* the verdict event's summary */
	bool exit0_over_oom;      /* the command exited 0 but the log shows a failure that ended it
				   * (an OOM, or another error when v->oom is false) */
};

struct retry_fix {
	enum fix_id id;
	const char *label, *words;
	char *const *changes;     /* "path: old → new" */
	size_t nchanges;
	const char *note;         /* the fix's note for this job ("" when none) */
	int rungs;                /* a step fix: the rungs it went down at once (1 as a rule; more
				   * when the estimate says the rungs between would not fit) */
	int64_t card;             /* the card whose band the last rung fits, 0 when none */
	const char *ruled_out;    /* rungs > 1: the value of the last rung passed over ("41") */
	int64_t shortfall;        /* what the OOM message measured beyond the card (held +
				   * requested − usable), 0 when it did not say */
	int64_t removed;          /* shortfall > 0: what the rungs take off that phase, by the
				   * model */
	bool covered;             /* removed >= shortfall */
};

struct retry_end {
	enum retry_outcome outcome;
	int status;               /* the loop's exit status */
	const char *head;         /* the closing line for people ("" when it was said already) */
	const char *detail;       /* a paragraph after it ("" when none) */
	const char *text;         /* the end event's sentence (NULL: none) */
	const struct err *err;    /* what could not be done (RETRY_OUT_ERROR), or NULL */
};

struct retry_sink_ops {
	void (*on_try)(void *sink, const struct retry_try *t);
	void (*on_taken)(void *sink, const struct retry_try *t, const char *status);
	void (*on_waiting)(void *sink, const struct retry_try *t, const char *text);
	void (*on_verdict)(void *sink, const struct retry_try *t, const struct retry_verdict *v);
	void (*on_fix)(void *sink, const struct retry_try *t, const struct retry_fix *f);
	/* a line for people only (no event): t may be NULL */
	void (*on_note)(void *sink, const struct retry_try *t, const char *text);
	/* t is the last try (NULL when none started) */
	void (*on_end)(void *sink, const struct retry_try *t, const struct retry_end *end);
};

struct retry_sink {
	const struct retry_sink_ops *ops;
	void *data;
};

struct retry_sinks {
	const struct retry_sink *v;
	size_t n;
};

/* For runners: tell every sink that the worker took the job / what it waits for / a line. */
void retry_tell_taken(const struct retry_sinks *s, const struct retry_try *t, const char *status);
void retry_tell_waiting(const struct retry_sinks *s, const struct retry_try *t, const char *text);
void retry_tell_note(const struct retry_sinks *s, const struct retry_try *t, const char *text);

/* ---- the loop ---------------------------------------------------------------------------------- */

/* Runs the loop until a run fits, fails for another reason, no fix is left, max_tries runs were
 * made, or *o->stop changes. Every end is told to the sinks exactly once (on_end). Returns the
 * exit status: 0 fits (or passed the probe), 65 not GPU memory, 69 E / no fix / max tries,
 * 130 interrupted or stopped, or the ERR_ code of what could not be done. */
int retry_run(const struct retry_opts *o, const struct retry_runner_ops *rops, void *runner,
	      const struct retry_sinks *sinks);

/* The original of a retried job: the job as it was before `oomfix retry` first changed it,
 * kept as <job>.oomfix-runs/0.yaml (0.json for a JSON job; for a web UI job in its run folder,
 * job_config.json.oomfix-runs/0.json). Malloc'd; NULL when out of memory. */
char *retry_original_name(const struct source *s);

#endif

/* test_retry_loop.c — the retry loop of src/core/retry.c driven by a fake runner: no process, no
 * database. Each try "runs" by playing back a canned log (tests/retry/logs, written by the
 * stand-in trainer through make_logs.sh) into the try's log and through the probe, line by line
 * as a pipe would bring it, and stops where a real runner would stop the run. A recording sink
 * keeps what the loop said. Every outcome of retry_events.h is driven here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "oomfix/estimate.h"
#include "oomfix/retry.h"
#include "oomfix/text.h"
#include "retry_cli.h"

/* ---- the fake runner ----------------------------------------------------------------------- */

struct fake_try {
	const char *log;          /* a canned log in tests/retry/logs (NULL: no output) */
	enum retry_run_end end;   /* how the run ends besides its log */
	bool exit0;               /* the command's exit status was 0 */
};

struct fake {
	const struct fake_try *tries;
	int ntries, at;
	bool stopped_for_probe;   /* the last run was stopped because the probe decided */
};

static const char *tests_dir(void)
{
	const char *d = getenv("TESTS_DIR");
	return d ? d : "tests";
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* A run that ends without a log to judge: interrupted (the stop request arrives), stopped
 * from elsewhere, or never started. */
static int fake_end(const struct fake_try *ft, const struct retry_try *t,
		    volatile sig_atomic_t *stop, struct retry_try_result *out)
{
	memset(out, 0, sizeof *out);
	out->step = -1;
	out->end = ft->end;
	if (ft->end == RETRY_RAN_INTERRUPTED)
		(*stop)++;
	snprintf(out->head, sizeof out->head, "try %d: ended", t->index);
	snprintf(out->text, sizeof out->text, "Ended.");
	return ERR_OK;
}

/* Plays a canned log into the try's log and the probe, a piece per line or tqdm frame as a pipe
 * brings it; once the probe has decided, the run is stopped as a real runner stops it (the
 * trainer's "Job stopped" after SIGINT, exit 0). */
static int fake_feed_run(void *rn, const struct retry_try *t, struct retry_probe *probe,
			 const struct retry_sinks *sinks, volatile sig_atomic_t *stop,
			 struct retry_try_result *out, struct err *e)
{
	struct fake *f = rn;
	assert_true(f->at < f->ntries);
	const struct fake_try *ft = &f->tries[f->at++];
	if (ft->end != RETRY_RAN)
		return fake_end(ft, t, stop, out);
	memset(out, 0, sizeof *out);
	out->step = -1;
	f->stopped_for_probe = false;
	char path[4096];
	size_t len;
	snprintf(path, sizeof path, "%s/retry/logs/%s", tests_dir(), ft->log);
	char *text = slurp(path, &len);
	size_t i = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && text[j] != '\n' && text[j] != '\r')
			j++;
		if (j < len)
			j++;
		assert_int_equal(write(t->logfd, text + i, j - i), (ssize_t)(j - i));
		enum retry_probe_state st = retry_probe_feed(probe, text + i, j - i);
		i = j;
		if (st != RETRY_PROBE_WATCHING) {
			static const char stopped[] = "\n========================================\nJob "
						      "stopped\n========================================\n";
			assert_int_equal(write(t->logfd, stopped, sizeof stopped - 1),
					 (ssize_t)(sizeof stopped - 1));
			f->stopped_for_probe = true;
			break;
		}
	}
	free(text);
	out->step = probe->step;
	out->exited_zero = f->stopped_for_probe || ft->exit0;
	return ERR_OK;
}

static const struct retry_runner_ops fake_ops = { .run = fake_feed_run };

/* ---- the recording sink -------------------------------------------------------------------- */

struct rec {
	int ntry, nverdict, nfix, nend;
	char fixes[256];
	enum diag_timing timing[8]; /* each verdict's timing */
	enum retry_outcome outcome;
	int status;
	char head[1024], detail[2048], text[2048];
	int end_try;                /* the end's try number, -1 when none */
	int rungs;                  /* the last fix's rungs */
	int64_t shortfall, removed; /* ... what its OOM measured short, what the rungs take off */
	bool covered;
	char ruled_out[64];         /* ... and the rung the estimate passed over */
	int estimates;              /* tries told with a known estimate */
};

static void rec_try(void *d, const struct retry_try *t)
{
	((struct rec *)d)->ntry++;
	if (t->est && t->est->known)
		((struct rec *)d)->estimates++;
}

static void rec_verdict(void *d, const struct retry_try *t, const struct retry_verdict *v)
{
	struct rec *r = d;
	if (r->nverdict < 8)
		r->timing[r->nverdict] = v->v->oom ? v->v->timing : DIAG_T_NONE;
	r->nverdict++;
}

static void rec_fix(void *d, const struct retry_try *t, const struct retry_fix *f)
{
	struct rec *r = d;
	size_t n = strlen(r->fixes);
	snprintf(r->fixes + n, sizeof r->fixes - n, "%s%s", n ? " " : "", fix_name(f->id));
	r->nfix++;
	r->rungs = f->rungs;
	r->shortfall = f->shortfall;
	r->removed = f->removed;
	r->covered = f->covered;
	snprintf(r->ruled_out, sizeof r->ruled_out, "%s", f->ruled_out ? f->ruled_out : "");
}

static void rec_end(void *d, const struct retry_try *t, const struct retry_end *end)
{
	struct rec *r = d;
	r->nend++;
	r->outcome = end->outcome;
	r->status = end->status;
	r->end_try = t ? t->n : -1;
	snprintf(r->head, sizeof r->head, "%s", end->head);
	snprintf(r->detail, sizeof r->detail, "%s", end->detail);
	snprintf(r->text, sizeof r->text, "%s", end->text ? end->text : "");
}

static const struct retry_sink_ops rec_ops = {
	.on_try = rec_try, .on_verdict = rec_verdict, .on_fix = rec_fix, .on_end = rec_end,
};

/* ---- a case ---------------------------------------------------------------------------------- */

struct run {
	char dir[256], job[300];
	struct rec rec;
	int status;
	struct fake fake;
};

/* The card the next case runs on (0: unknown, as without --vram and nvidia-smi). */
static int64_t case_card;
/* When set, the next case also tells the sentences for people (retry_text_ops) to this file. */
static FILE *case_said;
#define STEP_CARD (105LL << 30) /* [512] fits (103.8 GiB band top), [512, 768] not (108.4) */

/* Writes the job (a file of tests/retry/jobs, with `from` replaced by `to` when given),
 * then runs the loop over the fake tries. */
static void run_case(struct run *c, const char *jobfile, const char *from, const char *to,
		     long long probe, int max_tries, const struct fake_try *tries, int ntries)
{
	memset(c, 0, sizeof *c);
	snprintf(c->dir, sizeof c->dir, "/tmp/oomfix-retry-loop-XXXXXX");
	assert_non_null(mkdtemp(c->dir));
	snprintf(c->job, sizeof c->job, "%s/job.yaml", c->dir);
	char path[4096];
	size_t len;
	snprintf(path, sizeof path, "%s/retry/jobs/%s", tests_dir(), jobfile);
	char *text = slurp(path, &len);
	FILE *f = fopen(c->job, "w");
	assert_non_null(f);
	char *at = from ? strstr(text, from) : NULL;
	if (at) {
		fwrite(text, 1, (size_t)(at - text), f);
		fputs(to, f);
		fputs(at + strlen(from), f);
	} else {
		assert_null(from);
		fputs(text, f);
	}
	fclose(f);
	free(text);
	static volatile sig_atomic_t stop;
	stop = 0;
	struct retry_opts o = { c->job, max_tries, probe, NULL, &stop, case_card, false };
	c->fake = (struct fake){ tries, ntries, 0, false };
	struct retry_text said = { 0 };
	struct retry_sink sink[2] = { { &rec_ops, &c->rec }, { &retry_text_ops, &said } };
	struct retry_sinks sinks = { sink, case_said ? 2 : 1 };
	int saved = -1;
	if (case_said) { /* the text sink writes on stderr */
		fflush(stderr);
		saved = dup(2);
		assert_true(saved >= 0 && dup2(fileno(case_said), 2) == 2);
	}
	c->status = retry_run(&o, &fake_ops, &c->fake, &sinks);
	if (case_said) {
		fflush(stderr);
		assert_int_equal(dup2(saved, 2), 2);
		close(saved);
	}
	retry_text_free(&said);
	assert_int_equal(c->rec.nend, 1); /* every end is told once */
	assert_int_equal(c->rec.status, c->status);
	assert_int_equal(c->fake.at, ntries); /* no try more, no try less */
}

static void cleanup(struct run *c)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->dir);
	assert_int_equal(system(cmd), 0);
}

static bool file_has(const char *path, const char *needle)
{
	size_t len;
	char *t = slurp(path, &len);
	bool has = strstr(t, needle) != NULL;
	free(t);
	return has;
}

static bool exists(const char *dir, const char *name)
{
	char p[600];
	struct stat st;
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return stat(p, &st) == 0;
}

/* ---- the outcomes ---------------------------------------------------------------------------- */

static void fits_after_a_fix(void **state)
{
	static const struct fake_try tries[] = {
		{ "flux_load.log", RETRY_RAN, false },
		{ "flux_fits.log", RETRY_RAN, true },
	};
	struct run c;
	run_case(&c, "flux_load.yaml", NULL, NULL, 0, 6, tries, 2);
	assert_int_equal(c.status, 0);
	assert_int_equal(c.rec.outcome, RETRY_OUT_FITS);
	assert_string_equal(c.rec.fixes, "low_vram");
	assert_int_equal(c.rec.timing[0], DIAG_T_BEFORE_TRAINING);
	assert_int_equal(c.rec.end_try, 2);
	assert_string_equal(c.rec.head, "try 2: the run finished: the job fits.");
	/* a whole training run: what it was trained with, no advice to raise the steps (D19) */
	assert_non_null(strstr(c.rec.detail, "Training finished with the settings this retry saved "
					     "(low_vram)"));
	assert_null(strstr(c.rec.detail, "Raise train.steps"));
	assert_true(file_has(c.job, "low_vram: true"));
	/* the original is kept (restore --first); the job~ is the version before the last fix */
	char orig[600];
	snprintf(orig, sizeof orig, "%s/job.yaml.oomfix-runs/0.yaml", c.dir);
	assert_false(file_has(orig, "low_vram: true"));
	assert_true(exists(c.dir, "job.yaml.oomfix-runs/1.log") && exists(c.dir, "job.yaml.oomfix-runs/2.log"));
	cleanup(&c);
}

static void fits_as_it_is(void **state)
{
	static const struct fake_try tries[] = { { "safe_fits.log", RETRY_RAN, true } };
	struct run c;
	run_case(&c, "conservative.yaml", NULL, NULL, 0, 6, tries, 1);
	assert_int_equal(c.rec.outcome, RETRY_OUT_FITS);
	assert_int_equal(c.rec.nfix, 0);
	assert_non_null(strstr(c.rec.detail, "Training finished with the job as it was"));
	assert_false(exists(c.dir, "job.yaml.oomfix-runs/0.yaml")); /* nothing changed: no original */
	cleanup(&c);
}

/* The probe: 5 steps, and a preview sampling round during training. The baseline sample before
 * step 1 is not one: the run passes at the round of step 20, not at step 5. */
static void probe_passes_at_a_round_in_training(void **state)
{
	static const struct fake_try tries[] = { { "safe_fits.log", RETRY_RAN, true } };
	struct run c;
	run_case(&c, "conservative.yaml", NULL, NULL, 5, 6, tries, 1);
	assert_int_equal(c.status, 0);
	assert_int_equal(c.rec.outcome, RETRY_OUT_PROBE);
	assert_string_equal(c.rec.head, "try 1: passed the probe at step 20: the job fits.");
	assert_non_null(strstr(c.rec.detail, "a preview sampling round during training, at step 20"));
	assert_non_null(strstr(c.rec.detail, "Not seen: steps 21 to 40, buckets or clip lengths not "
					     "drawn yet, and later sampling rounds."));
	assert_non_null(strstr(c.rec.text, "Not seen:"));
	cleanup(&c);
}

/* sample_every beyond the job's steps: no round will come, the probe says so and does not wait
 * for one (D38). */
static void probe_knows_no_round_comes(void **state)
{
	static const struct fake_try tries[] = { { "safe_no_round.log", RETRY_RAN, true } };
	struct run c;
	run_case(&c, "conservative.yaml", "sample_every: 20", "sample_every: 500", 5, 6, tries, 1);
	assert_int_equal(c.rec.outcome, RETRY_OUT_PROBE);
	assert_string_equal(c.rec.head, "try 1: passed the probe at step 5: the job fits.");
	assert_non_null(strstr(c.rec.detail, "No preview sampling round comes during training "
					     "(sample_every 500, the job has 40 steps)"));
	cleanup(&c);
}

static void probe_with_sampling_off(void **state)
{
	static const struct fake_try tries[] = { { "safe_sampling_off.log", RETRY_RAN, true } };
	struct run c;
	run_case(&c, "conservative.yaml", "      train:\n", "      train:\n        disable_sampling: true\n",
		 5, 6, tries, 1);
	assert_int_equal(c.rec.outcome, RETRY_OUT_PROBE);
	assert_string_equal(c.rec.head, "try 1: passed the probe at step 5: the job fits.");
	assert_non_null(strstr(c.rec.detail, "Sampling is off, so no sampling round was needed."));
	cleanup(&c);
}

/* An OOM skip banner in the probe run is the try's failure, never a pass: its fix is the next
 * step (here the last try: it is named, not made). */
static void probe_skip_is_a_failure(void **state)
{
	static const struct fake_try tries[] = { { "bucket_skips.log", RETRY_RAN, true } };
	struct run c;
	run_case(&c, "zimage_largest_bucket.yaml", NULL, NULL, 5, 1, tries, 1);
	assert_int_equal(c.status, 69);
	assert_int_equal(c.rec.outcome, RETRY_OUT_MAX_TRIES);
	assert_int_equal(c.rec.nverdict, 1);
	assert_int_equal(c.rec.timing[0], DIAG_T_INTERMITTENT);
	assert_non_null(strstr(c.rec.head, "the next fix would be drop_largest_bucket"));
	cleanup(&c);
}

static void probe_skip_gets_its_fix(void **state)
{
	static const struct fake_try tries[] = {
		{ "bucket_skips.log", RETRY_RAN, true },
		{ "safe_fits.log", RETRY_RAN, true },
	};
	struct run c;
	run_case(&c, "zimage_largest_bucket.yaml", NULL, NULL, 5, 6, tries, 2);
	assert_string_equal(c.rec.fixes, "drop_largest_bucket");
	assert_int_equal(c.rec.outcome, RETRY_OUT_PROBE);
	cleanup(&c);
}

/* Without a probe, a run that survives its skips finished: it fits, the skips named. */
/* With a card known, a step fix goes down to the first rung whose band top fits it, at once;
 * without one, one rung as ever. */
static void step_fix_takes_rungs_the_estimate_rules_out(void **state)
{
	static const struct fake_try tries[] = {
		{ "bucket_skips.log", RETRY_RAN, true },
		{ "safe_fits.log", RETRY_RAN, true },
	};
	struct run c;
	case_card = STEP_CARD;
	run_case(&c, "zimage_largest_bucket.yaml", NULL, NULL, 5, 6, tries, 2);
	case_card = 0;
	assert_string_equal(c.rec.fixes, "drop_largest_bucket");
	assert_int_equal(c.rec.rungs, 2);
	assert_string_equal(c.rec.ruled_out, "[512, 768]");
	assert_int_equal(c.rec.estimates, 2);
	assert_true(file_has(c.job, "resolution: [512]"));
	cleanup(&c);

	run_case(&c, "zimage_largest_bucket.yaml", NULL, NULL, 5, 6, tries, 2);
	assert_int_equal(c.rec.rungs, 1);
	assert_true(file_has(c.job, "resolution: [512, 768]"));
	cleanup(&c);
}

/* An OOM message with numbers in training (held 79.12 GiB of a 79.25 GiB card, asking 2 or 6 GiB
 * more) measures how far short the job was: the step fix goes down as many rungs as the model
 * says it takes to cover that (one rung takes off 4.3 GiB, two 7.4), with no --vram and a band
 * that never fits the card, and no further. */
static void step_fix_covers_the_shortfall(void **state)
{
	static const struct fake_try short2[] = {
		{ "bucket_oom_short2.log", RETRY_RAN, false },
		{ "safe_fits.log", RETRY_RAN, true },
	};
	static const struct fake_try short6[] = {
		{ "bucket_oom_short6.log", RETRY_RAN, false },
		{ "safe_fits.log", RETRY_RAN, true },
	};
	struct run c;
	run_case(&c, "zimage_largest_bucket.yaml", NULL, NULL, 5, 6, short2, 2);
	assert_string_equal(c.rec.fixes, "drop_largest_bucket");
	/* 79.12 + 2.00 − (79.25 − 0.01 unaccounted) */
	assert_true(c.rec.shortfall > (1900LL << 20) && c.rec.shortfall < (1950LL << 20));
	assert_true(c.rec.covered);
	assert_true(c.rec.removed >= c.rec.shortfall);
	assert_int_equal(c.rec.rungs, 1);
	assert_true(file_has(c.job, "resolution: [512, 768]"));
	cleanup(&c);

	run_case(&c, "zimage_largest_bucket.yaml", NULL, NULL, 5, 6, short6, 2);
	assert_true(c.rec.shortfall > (5900LL << 20) && c.rec.shortfall < (6050LL << 20));
	assert_true(c.rec.covered);
	assert_true(c.rec.removed >= c.rec.shortfall);
	assert_int_equal(c.rec.rungs, 2);
	assert_true(file_has(c.job, "resolution: [512]"));
	cleanup(&c);

	/* a log without numbers (the trainer's skips) measures nothing: one rung, as ever */
	static const struct fake_try skips[] = {
		{ "bucket_skips.log", RETRY_RAN, true },
		{ "safe_fits.log", RETRY_RAN, true },
	};
	run_case(&c, "zimage_largest_bucket.yaml", NULL, NULL, 5, 6, skips, 2);
	assert_int_equal(c.rec.shortfall, 0);
	assert_int_equal(c.rec.rungs, 1);
	cleanup(&c);
}

/* An extrapolated estimate (Wan at 81 frames: longer than any report) never takes several rungs
 * at once, even with a card so large that a lower rung would "fit": one rung, and the run tells. */
static void extrapolated_takes_one_rung(void **state)
{
	static const struct fake_try tries[] = {
		{ "bucket_skips.log", RETRY_RAN, true },
		{ "safe_fits.log", RETRY_RAN, true },
	};
	struct run c;
	case_card = 50LL << 30; /* 41 frames over it (56.9 GiB band top), 21 under (43.1) */
	run_case(&c, "wan_video.yaml", NULL, NULL, 5, 6, tries, 2);
	case_card = 0;
	assert_string_equal(c.rec.fixes, "num_frames");
	assert_int_equal(c.rec.rungs, 1);
	assert_true(file_has(c.job, "num_frames: 41"));
	cleanup(&c);
}

static void survived_without_probe(void **state)
{
	static const struct fake_try tries[] = { { "bucket_skips.log", RETRY_RAN, true } };
	struct run c;
	run_case(&c, "zimage_largest_bucket.yaml", NULL, NULL, 0, 6, tries, 1);
	assert_int_equal(c.rec.outcome, RETRY_OUT_FITS);
	assert_non_null(strstr(c.rec.detail, "It survived out-of-memory skips (D:"));
	cleanup(&c);
}

static void worker_e(void **state)
{
	static const struct fake_try tries[] = { { "safe_worker.log", RETRY_RAN, false } };
	struct run c;
	run_case(&c, "conservative.yaml", NULL, NULL, 0, 6, tries, 1);
	assert_int_equal(c.status, 69);
	assert_int_equal(c.rec.outcome, RETRY_OUT_WORKER);
	assert_int_equal(c.rec.nfix, 0);
	cleanup(&c);
}

static void exhausted(void **state)
{
	static const struct fake_try tries[] = { { "sdxl_load.log", RETRY_RAN, false } };
	struct run c;
	run_case(&c, "sdxl_big_previews.yaml", NULL, NULL, 0, 6, tries, 1);
	assert_int_equal(c.status, 69);
	assert_int_equal(c.rec.outcome, RETRY_OUT_EXHAUSTED);
	assert_non_null(strstr(c.rec.text, "exhausted for this phase"));
	cleanup(&c);
}

static void unknown_timing(void **state)
{
	static const struct fake_try tries[] = { { "training_no_step.log", RETRY_RAN, false } };
	struct run c;
	run_case(&c, "conservative.yaml", NULL, NULL, 0, 6, tries, 1);
	assert_int_equal(c.status, 69);
	assert_int_equal(c.rec.outcome, RETRY_OUT_UNKNOWN);
	/* the decision's words (plan_decision_text), as `oomfix fix JOB LOG next` says them */
	assert_non_null(strstr(c.rec.text, "no change is chosen on a guess"));
	assert_int_equal(c.rec.nfix, 0);
	cleanup(&c);
}

static void not_oom(void **state)
{
	static const struct fake_try tries[] = { { "safe_not_oom.log", RETRY_RAN, false } };
	struct run c;
	run_case(&c, "conservative.yaml", NULL, NULL, 0, 6, tries, 1);
	assert_int_equal(c.status, 65);
	assert_int_equal(c.rec.outcome, RETRY_OUT_NOT_OOM);
	assert_non_null(strstr(c.rec.text, "not for GPU memory (missing_file)"));
	cleanup(&c);
}

static void interrupted(void **state)
{
	static const struct fake_try tries[] = { { NULL, RETRY_RAN_INTERRUPTED, false } };
	struct run c;
	run_case(&c, "conservative.yaml", NULL, NULL, 0, 6, tries, 1);
	assert_int_equal(c.status, 130);
	assert_int_equal(c.rec.outcome, RETRY_OUT_INTERRUPTED);
	cleanup(&c);
}

static void max_tries(void **state)
{
	static const struct fake_try tries[] = { { "flux_load.log", RETRY_RAN, false } };
	struct run c;
	run_case(&c, "flux_load.yaml", NULL, NULL, 0, 1, tries, 1);
	assert_int_equal(c.status, 69);
	assert_int_equal(c.rec.outcome, RETRY_OUT_MAX_TRIES);
	assert_non_null(strstr(c.rec.text, "the next fix would be low_vram"));
	assert_int_equal(c.rec.nfix, 0); /* one change, then a run: no change no run will test */
	assert_false(file_has(c.job, "low_vram: true"));
	cleanup(&c);
}

static void stopped_and_not_started(void **state)
{
	static const struct fake_try stopped[] = { { NULL, RETRY_RAN_STOPPED, false } };
	static const struct fake_try none[] = { { NULL, RETRY_RAN_NOT_STARTED, false } };
	struct run c;
	run_case(&c, "conservative.yaml", NULL, NULL, 0, 6, stopped, 1);
	assert_int_equal(c.status, 130);
	assert_int_equal(c.rec.outcome, RETRY_OUT_STOPPED);
	cleanup(&c);
	run_case(&c, "conservative.yaml", NULL, NULL, 0, 6, none, 1);
	assert_int_equal(c.status, 69);
	assert_int_equal(c.rec.outcome, RETRY_OUT_ERROR);
	cleanup(&c);
}

/* Runs a case with the sentences for people kept; returns them (malloc'd). */
static char *said_by(struct run *c, const char *jobfile, int max_tries,
		     const struct fake_try *tries, int ntries)
{
	case_said = tmpfile();
	assert_non_null(case_said);
	run_case(c, jobfile, NULL, NULL, 0, max_tries, tries, ntries);
	long n = ftell(case_said);
	assert_true(n >= 0);
	char *out = calloc(1, (size_t)n + 1);
	assert_non_null(out);
	rewind(case_said);
	assert_int_equal(fread(out, 1, (size_t)n, case_said), (size_t)n);
	fclose(case_said);
	case_said = NULL;
	return out;
}

/* The line of `text` that starts with `start` after blanks ("" when none), into buf. */
static const char *line_of(const char *text, const char *start, char *buf, size_t sz)
{
	buf[0] = 0;
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *p = l + strspn(l, " ");
		if (!strncmp(p, start, strlen(start))) {
			snprintf(buf, sz, "%.*s", (int)strcspn(l, "\n"), l);
			break;
		}
	}
	return buf;
}

/* Every line of the table (from `text` to the closing line) fits 80 cells. */
static void fits_80(const char *text)
{
	const char *end = strstr(text + 1, "\noomfix retry: ");
	assert_non_null(end);
	for (const char *l = text; l < end;) {
		size_t n = strcspn(l, "\n");
		if (text_width(l, n) > 80)
			fail_msg("wider than 80 cells: %.*s", (int)n, l);
		l += n + (l[n] == '\n');
	}
}

/* A run of two tries or more ends with the table of its tries, before the closing line: each
 * try's number, its log (cut to keep its end), its verdict and step, the fix saved after it. */
static void summary_after_several_tries(void **state)
{
	static const struct fake_try tries[] = {
		{ "flux_load.log", RETRY_RAN, false },
		{ "flux_fits.log", RETRY_RAN, true },
	};
	struct run c;
	char *out = said_by(&c, "flux_load.yaml", 6, tries, 2);
	assert_int_equal(c.status, 0);
	const char *table = strstr(out, "oomfix retry: the tries of this run, each with the fix saved "
				   "after it:\n");
	const char *closing = strstr(out, "oomfix retry: try 2: the run finished: the job fits.");
	assert_non_null(table);
	assert_non_null(closing);
	assert_true(table < closing);
	char l[256];
	line_of(table, "TRY ", l, sizeof l);
	assert_non_null(strstr(l, "LOG"));
	assert_non_null(strstr(l, "VERDICT"));
	assert_non_null(strstr(l, "FIX SAVED AFTER IT"));
	/* the log's path is longer than its column: its end is kept, after "…" */
	line_of(table, "1 ", l, sizeof l);
	assert_non_null(strstr(l, "…"));
	assert_non_null(strstr(l, "oomfix-runs/1.log "));
	assert_non_null(strstr(l, " A before training "));
	assert_true(strlen(l) > 8 && !strcmp(l + strlen(l) - 8, "low_vram"));
	line_of(table, "2 ", l, sizeof l);
	assert_non_null(strstr(l, "oomfix-runs/2.log "));
	assert_non_null(strstr(l, " fits "));
	assert_true(l[strlen(l) - 1] == '-'); /* no fix after the try that fits */
	line_of(table, "3 ", l, sizeof l);
	assert_string_equal(l, "");
	/* the columns line up: each row's verdict starts where its heading does */
	line_of(table, "TRY ", l, sizeof l);
	char r1[256], r2[256];
	line_of(table, "1 ", r1, sizeof r1);
	line_of(table, "2 ", r2, sizeof r2);
	int head_at = text_width(l, (size_t)(strstr(l, "VERDICT") - l));
	assert_int_equal(text_width(r1, (size_t)(strstr(r1, " A before") + 1 - r1)), head_at);
	assert_int_equal(text_width(r2, (size_t)(strstr(r2, " fits ") + 1 - r2)), head_at);
	fits_80(table);
	free(out);
	cleanup(&c);
}

/* The last try's row says how the loop ended when its verdict cannot: interrupted. */
static void summary_of_an_interrupted_run(void **state)
{
	static const struct fake_try tries[] = {
		{ "flux_load.log", RETRY_RAN, false },
		{ NULL, RETRY_RAN_INTERRUPTED, false },
	};
	struct run c;
	char *out = said_by(&c, "flux_load.yaml", 6, tries, 2);
	assert_int_equal(c.status, 130);
	char l[256];
	const char *table = strstr(out, "the tries of this run");
	assert_non_null(table);
	assert_true(table < strstr(out, "oomfix retry: try 2: ended"));
	line_of(table, "2 ", l, sizeof l);
	assert_non_null(strstr(l, " interrupted "));
	line_of(table, "1 ", l, sizeof l);
	assert_non_null(strstr(l, "low_vram"));
	fits_80(table);
	free(out);
	cleanup(&c);
}

/* One try: its own lines say it all, no table. */
static void no_summary_after_one_try(void **state)
{
	static const struct fake_try fits[] = { { "safe_fits.log", RETRY_RAN, true } };
	static const struct fake_try fails[] = { { "flux_load.log", RETRY_RAN, false } };
	struct run c;
	char *out = said_by(&c, "conservative.yaml", 6, fits, 1);
	assert_non_null(strstr(out, "try 1: the run finished: the job fits."));
	assert_null(strstr(out, "the tries of this run"));
	free(out);
	cleanup(&c);
	out = said_by(&c, "flux_load.yaml", 1, fails, 1);
	assert_int_equal(c.status, 69);
	assert_non_null(strstr(out, "stopping after 1 tries"));
	assert_null(strstr(out, "the tries of this run"));
	free(out);
	cleanup(&c);
}

/* The protocol's tables: every name parses back to itself; an unknown one is no event / an
 * error; each outcome's status is the one the loop exits with. */
static void event_tables(void **state)
{
	for (int i = 0; i < RETRY_EV_COUNT; i++)
		assert_int_equal(retry_event_parse(retry_event_name((enum retry_event)i)), i);
	assert_int_equal(retry_event_parse("tries"), RETRY_EV_COUNT);
	assert_int_equal(retry_event_parse(NULL), RETRY_EV_COUNT);
	for (int i = 0; i < RETRY_OUT_COUNT; i++)
		assert_int_equal(retry_outcome_parse(retry_outcome_name((enum retry_outcome)i)), i);
	assert_int_equal(retry_outcome_parse("fit"), RETRY_OUT_ERROR);
	assert_string_equal(retry_outcome_name(RETRY_OUT_MAX_TRIES), "max_tries");
	assert_int_equal(retry_outcome_status(RETRY_OUT_NOT_OOM), 65);
	assert_true(retry_outcome_fits(RETRY_OUT_PROBE) && !retry_outcome_fits(RETRY_OUT_STOPPED));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fits_after_a_fix),
		cmocka_unit_test(fits_as_it_is),
		cmocka_unit_test(probe_passes_at_a_round_in_training),
		cmocka_unit_test(probe_knows_no_round_comes),
		cmocka_unit_test(probe_with_sampling_off),
		cmocka_unit_test(probe_skip_is_a_failure),
		cmocka_unit_test(probe_skip_gets_its_fix),
		cmocka_unit_test(step_fix_takes_rungs_the_estimate_rules_out),
		cmocka_unit_test(step_fix_covers_the_shortfall),
		cmocka_unit_test(extrapolated_takes_one_rung),
		cmocka_unit_test(survived_without_probe),
		cmocka_unit_test(worker_e),
		cmocka_unit_test(exhausted),
		cmocka_unit_test(unknown_timing),
		cmocka_unit_test(not_oom),
		cmocka_unit_test(interrupted),
		cmocka_unit_test(max_tries),
		cmocka_unit_test(stopped_and_not_started),
		cmocka_unit_test(event_tables),
		cmocka_unit_test(summary_after_several_tries),
		cmocka_unit_test(summary_of_an_interrupted_run),
		cmocka_unit_test(no_summary_after_one_try),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* retry.c — the retry loop (SPEC §11) as one state machine over a runner and sinks; see retry.h.
 * Nothing here prints or starts a process: the runner runs, the sinks tell. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oomfix/doc.h"
#include "oomfix/estimate.h"
#include "oomfix/i18n.h"
#include "oomfix/measure.h"
#include "oomfix/job.h"
#include "oomfix/retry.h"
#include "oomfix/save.h"
#include "oomfix/source.h"

/* ---- the probe --------------------------------------------------------------------------- */

void retry_probe_init(struct retry_probe *p, const struct job *j, long long steps,
		      long long prev_fail)
{
	memset(p, 0, sizeof *p);
	p->name = j ? j->name : NULL;
	p->step = -1;
	p->round_step = -1;
	p->skip_step = -1;
	p->steps = steps;
	p->prev_fail = prev_fail > 0 ? prev_fail : 0;
	p->target = p->prev_fail + steps;
	if (j) {
		p->job_steps = j->steps > 0 ? j->steps : 0;
		p->sample_every = j->sample_every > 0 ? j->sample_every : 0;
		p->sampling_off = j->disable_sampling;
		/* The trainer samples at every multiple of sample_every below the last step, and once
		 * more after it: a sample_every at or beyond the steps gives no round during training. */
		p->no_round_coming = !p->sampling_off && p->sample_every && p->job_steps &&
				     p->sample_every >= p->job_steps;
	}
}

static void probe_decide(struct retry_probe *p)
{
	if (!p->steps || p->state != RETRY_PROBE_WATCHING)
		return;
	if (p->skip_step >= 0) {
		/* Any OOM in the probe run is this try's failure, never a pass (SPEC §11). The run
		 * goes on for STEPS steps after the skip all the same: a trainer that gives up after
		 * three skips in a row shows a failure in the first steps (B), which wants another fix
		 * than an OOM now and then (D); either way its log is judged, not the probe. */
		if (p->step >= p->skip_step + p->steps)
			p->state = RETRY_PROBE_FAILED;
		return;
	}
	if (p->step >= p->target && p->step >= 1 && !p->sampling &&
	    (p->sampling_off || p->no_round_coming || p->rounds > 0))
		p->state = RETRY_PROBE_PASSED;
}

static void probe_segment(struct retry_probe *p)
{
	static const char skip[] = "OOM during training step, skipping batch";
	struct diag_bar b;
	if (p->len && memmem(p->seg, p->len, skip, sizeof skip - 1)) {
		/* the bar still advances over a skipped batch: that step did not fit */
		if (p->skip_step < 0)
			p->skip_step = p->step + 1;
		return;
	}
	if (!p->len || !diag_parse_bar(p->seg, p->len, &b))
		return;
	size_t nl = p->name ? strlen(p->name) : 0;
	if ((nl && b.dlen == nl && !memcmp(b.desc, p->name, nl)) || b.lrloss) {
		p->step = b.n;
	} else if (diag_is_sampling_bar(b.desc, b.dlen)) {
		if (b.n < b.total) {
			if (!p->sampling)
				/* the baseline sample before step 1 is not a round during training */
				p->sampling_in_training = p->step >= 1;
			p->sampling = true;
		} else if (p->sampling && b.total > 0) {
			if (p->sampling_in_training) {
				p->rounds++;
				p->round_step = p->step;
			}
			p->sampling = false;
		}
	}
}

enum retry_probe_state retry_probe_feed(struct retry_probe *p, const char *buf, size_t n)
{
	if (p->state != RETRY_PROBE_WATCHING)
		return p->state; /* decided: what it saw stays as it was then */
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (p->esc == 1) {
			p->esc = c == '[' ? 2 : 0;
			continue;
		}
		if (p->esc == 2) {
			if (c >= 0x40 && c <= 0x7e)
				p->esc = 0;
			continue;
		}
		if (c == 0x1b) {
			p->esc = 1;
		} else if (c == '\r' || c == '\n') {
			probe_segment(p);
			p->len = 0;
			probe_decide(p);
			if (p->state != RETRY_PROBE_WATCHING)
				return p->state;
		} else if (p->len < sizeof p->seg) {
			p->seg[p->len++] = (char)c;
		}
	}
	probe_segment(p); /* a bar frame is complete without its \r: tqdm writes \r first */
	probe_decide(p);
	return p->state;
}

/* Appends a formatted sentence (and a space before it when buf is not empty). */
static void add(char *buf, size_t sz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *buf, size_t sz, const char *fmt, ...)
{
	size_t len = strlen(buf);
	if (len + 2 >= sz)
		return;
	if (len)
		buf[len++] = ' ', buf[len] = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + len, sz - len, fmt, ap);
	va_end(ap);
}

void retry_probe_coverage(const struct retry_probe *p, char *buf, size_t sz)
{
	buf[0] = 0;
	if (p->prev_fail > 0)
		add(buf, sz, _("The probe saw training steps 1 to %lld, %lld past step %lld where the "
			       "previous run failed."), p->step, p->step - p->prev_fail, p->prev_fail);
	else
		add(buf, sz, _("The probe saw training steps 1 to %lld."), p->step);
	bool later_rounds = !p->sampling_off && !p->no_round_coming;
	if (p->sampling_off)
		add(buf, sz, "%s", _("Sampling is off, so no sampling round was needed."));
	else if (p->no_round_coming)
		add(buf, sz, _("No preview sampling round comes during training (sample_every %lld, "
			       "the job has %lld steps), so the probe did not wait for one; the sample "
			       "at the end of training was not seen."), p->sample_every, p->job_steps);
	else
		add(buf, sz, _("It went through a preview sampling round during training, at step "
			       "%lld."), p->round_step);
	if (p->job_steps > p->step && later_rounds)
		add(buf, sz, _("Not seen: steps %lld to %lld, buckets or clip lengths not drawn yet, "
			       "and later sampling rounds."), p->step + 1, p->job_steps);
	else if (p->job_steps > p->step)
		add(buf, sz, _("Not seen: steps %lld to %lld, and buckets or clip lengths not drawn "
			       "yet."), p->step + 1, p->job_steps);
	else
		add(buf, sz, "%s", _("Not seen: buckets or clip lengths not drawn yet."));
}

/* ---- telling the sinks ------------------------------------------------------------------- */

#define TELL(sinks, op, ...)                                                   \
	do {                                                                   \
		for (size_t i_ = 0; i_ < (sinks)->n; i_++)                     \
			if ((sinks)->v[i_].ops->op)                            \
				(sinks)->v[i_].ops->op((sinks)->v[i_].data, __VA_ARGS__); \
	} while (0)

void retry_tell_taken(const struct retry_sinks *s, const struct retry_try *t, const char *status)
{
	TELL(s, on_taken, t, status);
}

void retry_tell_waiting(const struct retry_sinks *s, const struct retry_try *t, const char *text)
{
	TELL(s, on_waiting, t, text);
}

void retry_tell_note(const struct retry_sinks *s, const struct retry_try *t, const char *text)
{
	TELL(s, on_note, t, text);
}

/* ---- the loop's state -------------------------------------------------------------------- */

struct loop {
	const struct retry_opts *o;
	const struct retry_sinks *sinks;
	char *dir;               /* the runs folder */
	long long prev_fail;     /* the step the previous try failed at (0: before training) */
	enum fix_id last_fix;    /* the fix saved after the previous try (FIX_NONE: none) */
	const struct retry_try *last; /* the try under way (or the last one), for the end */
	struct retry_try last_copy;   /* the last try's numbers once it is over */
	bool ended;
	int status;
	char fixes[256];         /* the fixes this invocation saved, for the closing line */
	int64_t card;            /* the card (opts, else the first OOM message's), 0: unknown */
};

/* A try is over: the end can still name it by its numbers (its log and job are gone). */
static void forget_try(struct loop *L, const struct retry_try *t)
{
	L->last_copy = (struct retry_try){ t->n, t->index, t->max_tries, NULL, -1, NULL, NULL,
					   NULL, t->card };
	L->last = &L->last_copy;
}

/* Ends the loop (once): tells the sinks and keeps the status. */
static int finish(struct loop *L, enum retry_outcome oc, int status, const char *head,
		  const char *detail, const char *text, const struct err *e)
{
	if (L->ended)
		return L->status;
	struct retry_end end = { oc, status, head ? head : "", detail ? detail : "", text, e };
	TELL(L->sinks, on_end, L->last, &end);
	L->ended = true;
	L->status = status;
	return status;
}

static int fail_err(struct loop *L, const struct err *e)
{
	return finish(L, RETRY_OUT_ERROR, e->code ? e->code : ERR_SOFTWARE, NULL, NULL, e->msg, e);
}

/* How a try is named in what is said: "try 3", or the log given with --log. */
static void try_label(const struct retry_try *t, char *buf, size_t sz)
{
	if (t->index > 0)
		snprintf(buf, sz, _("try %d"), t->index);
	else
		snprintf(buf, sz, "%s", _("the log given"));
}

/* "B: out of memory in training step 5, one of the first" — the verdict in a few words. */
static void verdict_words(const struct diag_result *v, char *buf, size_t sz)
{
	char what[300];
	switch (v->timing) {
	case DIAG_T_BEFORE_TRAINING:
		snprintf(what, sizeof what, _("out of memory before training, %s"),
			 diag_phase_label(v->phase));
		break;
	case DIAG_T_FIRST_STEPS:
		snprintf(what, sizeof what, _("out of memory in training step %lld, one of the first"),
			 v->failed_step);
		break;
	case DIAG_T_SAMPLING:
		snprintf(what, sizeof what, _("out of memory while sampling at step %lld"),
			 v->failed_step);
		break;
	case DIAG_T_INTERMITTENT:
		snprintf(what, sizeof what, _("out of memory now and then, last in training step %lld"),
			 v->failed_step);
		break;
	case DIAG_T_ENVIRONMENT:
		snprintf(what, sizeof what, _("out of memory with the card held elsewhere, %s"),
			 diag_phase_label(v->phase));
		break;
	default:
		if (v->phase != DIAG_P_NONE)
			snprintf(what, sizeof what, _("out of memory, %s (the log does not show the "
						      "step)"), diag_phase_label(v->phase));
		else
			snprintf(what, sizeof what, "%s", _("out of memory (the log does not show when)"));
		snprintf(buf, sz, "?: %s", what);
		return;
	}
	snprintf(buf, sz, "%c: %s", diag_timing_letter(v->timing), what);
}

/* The number after the highest "<n>.log" in dir (1 for an empty or new folder), so a second
 * retry never overwrites the logs of an earlier one. */
static int next_log_number(const char *dir)
{
	int max = 0;
	DIR *d = opendir(dir);
	if (!d)
		return 1;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		if (end != de->d_name && !strcmp(end, ".log") && v > max && v < 1000000)
			max = (int)v;
	}
	closedir(d);
	return max + 1;
}

/* The job as it is now: its source, document and model (freed with close_job). */
struct loaded {
	struct source *s;
	struct doc *d;
	struct job *j;
};

static void close_job(struct loaded *l)
{
	job_free(&l->j);
	doc_free(&l->d);
	source_free(&l->s);
}

static int open_job(const char *arg, struct loaded *l, struct err *e)
{
	memset(l, 0, sizeof *l);
	int rc = source_open(arg, &l->s, e);
	size_t len;
	if (rc == ERR_OK) {
		const char *text = source_text(l->s, &len);
		rc = doc_load(source_label(l->s), text, len, &l->d, e);
	}
	if (rc == ERR_OK)
		rc = job_from_doc(l->d, &l->j, e);
	if (rc)
		close_job(l);
	return rc;
}

/* Folders oomfix makes are the user's alone. */
static int make_dir(const char *path, struct err *e)
{
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		return err_set(e, ERR_CANTCREAT, path, 0, 0, _("cannot create it: %s"), strerror(errno));
	return ERR_OK;
}

/* The runs folder is oomfix's own: a link planted under its name would send the logs and the
 * job's first version into a folder someone else chose. */
static int own_dir(const char *path, struct err *e)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return err_set(e, ERR_CANTCREAT, path, 0, 0, _("cannot create it: %s"), strerror(errno));
	if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode))
		return err_set(e, ERR_CANTCREAT, path, 0, 0, "%s",
			       _("not a folder of oomfix's own (a symbolic link or a file stands in its "
				 "place); nothing was run"));
	return ERR_OK;
}

/* The folder for the runs' logs: JOB.oomfix-runs beside a file job; for a web UI job
 * <run folder>/job_config.json.oomfix-runs (the training and run folders too, as the worker
 * would create them). */
static int make_runs_dir(const struct source *s, char **dir, struct err *e)
{
	int rc;
	const char *run = source_run_dir(s);
	if (run) {
		char *parent = strdup(run);
		char *slash = parent ? strrchr(parent, '/') : NULL;
		if (slash && slash != parent) {
			*slash = 0;
			make_dir(parent, e); /* the run folder's own error says it better */
		}
		free(parent);
		if ((rc = make_dir(run, e)) != ERR_OK)
			return rc;
	}
	if (asprintf(dir, "%s.oomfix-runs", source_path(s)) < 0)
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", strerror(ENOMEM));
	if ((rc = make_dir(*dir, e)) != ERR_OK || (rc = own_dir(*dir, e)) != ERR_OK) {
		free(*dir);
		*dir = NULL;
	}
	return rc;
}

char *retry_original_name(const struct source *s)
{
	char *p = NULL;
	if (asprintf(&p, "%s.oomfix-runs/0.%s", source_path(s), source_is_json(s) ? "json" : "yaml") < 0)
		return NULL;
	return p;
}

/* Keeps the job as it was before the first change a retry makes, once: `restore --first` puts
 * it back, however many fixes later (JOB~ is only the version before the last one). */
static int keep_original(const struct source *s, struct err *e)
{
	char *path = retry_original_name(s);
	if (!path)
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", strerror(ENOMEM));
	int rc = ERR_OK;
	struct stat st;
	if (stat(path, &st) != 0) {
		size_t len;
		const char *text = source_text(s, &len);
		rc = save_private(path, text, len, save_mode_for(source_path(s)), e);
	}
	free(path);
	return rc;
}

/* ==== THE DECISION ==============================================================================
 * What comes after a failed run is the core's one decision (plan_decide, SPEC §3.4 "One
 * decision, every front end"); the loop only maps its answers to its own ends below and says
 * them in the decision's words (plan_decision_text), as `oomfix fix JOB LOG next` does. */
enum retry_next {
	NEXT_FIX,        /* apply the decision's fix */
	NEXT_WORKER,     /* verdict E: a fresh worker, not a setting */
	NEXT_UNKNOWN,    /* the log does not show when: no fix on a guess */
	NEXT_EXHAUSTED,  /* nothing left that acts on the failing phase */
	NEXT_NOT_OOM,    /* the run failed, not for GPU memory */
};

/* A try that did not finish is a failure, a survived OOM too (a probe run, or a run that exited
 * non-zero after its skips): its decision is the one for that failure. The try's log is its own
 * new run, so it is never older than the last change (`untried` is false). */
static enum retry_next retry_decide(const struct job *j, const struct diag_result *v,
				    struct plan *p, struct plan_decision *d)
{
	struct diag_result *failed = NULL;
	if (v->oom && v->survived && (failed = malloc(sizeof *failed)) != NULL) {
		*failed = *v;
		failed->survived = false;
		v = failed;
	}
	plan_build(j, v, p);
	*d = plan_decide(p, v, false);
	free(failed);
	switch (d->what) {
	case PLAN_NEXT_APPLY: return NEXT_FIX;
	case PLAN_NEXT_FRESH_WORKER: return NEXT_WORKER;
	case PLAN_NEXT_WHEN_UNKNOWN: return NEXT_UNKNOWN;
	case PLAN_NEXT_NOT_OOM: return NEXT_NOT_OOM;
	case PLAN_NEXT_SURVIVED: /* only when the copy could not be made: still a failure */
		if (d->fix != FIX_NONE)
			return NEXT_FIX;
		return p->first_fix == FIX_FRESH_WORKER ? NEXT_WORKER : NEXT_EXHAUSTED;
	default: return NEXT_EXHAUSTED;
	}
}

/* The value a step fix gives its setting after n rungs ("41" of "num_frames: 81 → 41"), for
 * saying which rung the estimate ruled out; "" when it cannot be told. */
static void rung_value(const struct loaded *l, enum fix_id id, int n, char *buf, size_t sz)
{
	struct doc *d = NULL;
	struct err e;
	err_clear(&e);
	buf[0] = 0;
	if (estimate_rung_doc(l->j, id, n, &d, &e) != ERR_OK || !d)
		return;
	char **changes;
	size_t nchanges = doc_changes(l->d, d, &changes);
	const char *arrow = nchanges ? strstr(changes[0], " → ") : NULL;
	if (arrow)
		snprintf(buf, sz, "%s", arrow + strlen(" → "));
	doc_changes_free(changes, nchanges);
	doc_free(&d);
}

/* What the OOM message of v measured beyond the card: held + requested, less what the card could
 * give the job (its capacity less what others and the unaccounted held). False when the message
 * has no such numbers, its phase is not the estimate's, or the job asked for no more than that. */
static bool shortfall_of(const struct diag_result *v, struct est_shortfall *sf)
{
	const struct memacct *m = &v->memory;
	memset(sf, 0, sizeof *sf);
	if (!v->oom || !m->present || m->job <= 0 || m->capacity <= 0 || !measure_phase_of(v, &sf->phase))
		return false;
	int64_t need = m->job + (m->requested > 0 ? m->requested : 0);
	int64_t usable = m->capacity - m->others_total - (m->unaccounted > 0 ? m->unaccounted : 0);
	sf->bytes = need - usable;
	return sf->bytes > 0;
}

/* Applies fix `id` to the job, keeps the original the first time, saves with the careful save
 * and a journal entry naming the try, and tells the sinks. v is the try's verdict: a step fix
 * goes far enough to cover the shortfall its OOM message measured (SPEC §12.2). */
static int apply_fix(struct loop *L, const struct retry_try *t, struct loaded *l, enum fix_id id,
		     const char *label, const char *words, const struct diag_result *v,
		     struct err *e)
{
	struct fix_edit_list fl;
	/* the failed phase, as `oomfix fix --log` reads it: after a training step a clip fix
	 * leaves the previews alone (E10) */
	int phase = v && v->oom ? (int)v->phase : 0;
	int rc = fix_edits_after(l->j, id, true, phase, &fl, e);
	if (rc)
		return rc;
	struct doc *nd = NULL;
	int rungs = 1;
	bool fits = false;
	struct estimate now;
	struct est_shortfall sf;
	bool have_sf = shortfall_of(v, &sf);
	bool known = estimate_job(l->j, &now) == ERR_OK && now.known;
	bool inside = known && now.phase[EST_TRAINING].basis != EST_EXTRAPOLATED;
	if (known && (L->card > 0 || have_sf) && (inside || have_sf) &&
	    (id == FIX_NUM_FRAMES || id == FIX_DROP_LARGEST_BUCKET)) {
		/* A step fix may go down several rungs at once: to the first whose band top fits
		 * the card and that takes off what the OOM measured it was short by. The estimate
		 * chooses how far; what is changed is still the plan's. On an extrapolated
		 * estimate (a clip longer, a bucket larger than any report) the band is not
		 * trusted: only the measured shortfall, else one rung, and the next run tells. */
		struct err re;
		err_clear(&re);
		if (estimate_rungs(l->j, id, phase, inside ? L->card : 0, have_sf ? &sf : NULL,
				   &rungs, &fits, &nd, &re) != ERR_OK ||
		    (!fits && !have_sf) || rungs < 2) {
			doc_free(&nd);
			rungs = 1;
		}
	}
	if (!nd)
		rc = doc_apply(l->d, fl.edits, fl.n, &nd, e);
	char note[512];
	snprintf(note, sizeof note, "%s", fl.note);
	fix_edits_free(&fl);
	size_t len;
	const char *text = rc ? NULL : doc_text(nd, &len);
	if (rc == ERR_OK)
		rc = keep_original(l->s, e);
	if (rc == ERR_OK)
		rc = source_save(l->s, text, len, 0, e);
	if (rc) {
		doc_free(&nd);
		return rc;
	}
	char **changes;
	size_t nchanges = doc_changes(l->d, nd, &changes);
	char jnote[1024];
	snprintf(jnote, sizeof jnote, _("oomfix retry, %s (%s); its log: %s"), label, words, t->log);
	const char *fixes[1] = { fix_name(id) };
	struct err je;
	err_clear(&je);
	if (source_journal_note(l->s, jnote, fixes, 1, (const char *const *)changes, nchanges,
				&je) != ERR_OK) {
		char said[sizeof je.msg + sizeof je.file + 64];
		snprintf(said, sizeof said, _("the job is saved, but the change journal %s was not "
					      "written: %s"), je.file, je.msg);
		retry_tell_note(L->sinks, t, said);
	}
	char ruled_out[128] = "";
	if (rungs > 1)
		rung_value(l, id, rungs - 1, ruled_out, sizeof ruled_out);
	struct retry_fix f = { id, label, words, changes, nchanges, note, rungs,
			       rungs > 1 && fits ? L->card : 0, ruled_out,
			       have_sf ? sf.bytes : 0, have_sf ? sf.removed : 0, have_sf && sf.covered };
	TELL(L->sinks, on_fix, t, &f);
	doc_changes_free(changes, nchanges);
	doc_free(&nd);
	size_t fl_len = strlen(L->fixes);
	snprintf(L->fixes + fl_len, sizeof L->fixes - fl_len, "%s%s", fl_len ? ", " : "", fix_name(id));
	return ERR_OK;
}

/* A run that finished (SPEC §11): the job fits. After a probe run the scale-up advice follows;
 * after a whole training run there is nothing to raise, only what it was trained with. */
static int end_fits(struct loop *L, const struct retry_try *t, const struct job *j,
		    const struct diag_result *v, const char *words)
{
	char head[256], detail[1536] = "";
	snprintf(head, sizeof head, _("try %d: the run finished: the job fits."), t->index);
	if (v->oom && v->survived)
		add(detail, sizeof detail, _("It survived out-of-memory skips (%s); they cost those "
					     "batches."), words);
	if (L->fixes[0])
		add(detail, sizeof detail, _("Training finished with the settings this retry saved "
					     "(%s): keep them."), L->fixes);
	else
		add(detail, sizeof detail, "%s", _("Training finished with the job as it was: nothing "
						   "was changed."));
	return finish(L, RETRY_OUT_FITS, 0, head, detail, _("The run finished: the job fits."), NULL);
}

static int end_probe(struct loop *L, const struct retry_try *t, const struct retry_probe *p)
{
	char head[256], cover[1024], detail[2048] = "", text[1536], advice[512];
	retry_probe_coverage(p, cover, sizeof cover);
	snprintf(head, sizeof head, _("try %d: passed the probe at step %lld: the job fits."),
		 t->index, p->step);
	add(detail, sizeof detail, "%s", cover);
	/* E8: with no change saved there is nothing to keep and no steps were lowered: the advice
	 * is to run the whole job, not to scale up what made a retry work */
	if (!L->fixes[0])
		add(detail, sizeof detail, "%s", _("Nothing was changed: the job as it is passed the "
						   "probe. Run the whole job next."));
	else if (scaleup_next(t->job, SCALEUP_NONE, advice, sizeof advice) != SCALEUP_NONE)
		add(detail, sizeof detail, "%s", advice);
	snprintf(text, sizeof text, _("The run passed the probe at step %lld: the job fits."), p->step);
	add(text, sizeof text, "%s", cover);
	if (!L->fixes[0])
		add(text, sizeof text, "%s", _("Nothing was changed: the job as it is passed the "
					       "probe. Run the whole job next."));
	return finish(L, RETRY_OUT_PROBE, 0, head, detail, text, NULL);
}

/* The verdict event's summary. */
static void summary_of(const struct diag_result *v, bool finished, const char *words, char *buf,
		       size_t sz)
{
	if (finished && v->oom)
		snprintf(buf, sz, _("the run finished, surviving out-of-memory skips (%s)"), words);
	else if (finished)
		snprintf(buf, sz, "%s", _("the run finished"));
	else if (v->oom)
		snprintf(buf, sz, "%s", words);
	else
		diag_sentence(v, buf, sz);
}

/* Decides what a finished try means from its log (SPEC §11): the loop's exit status, or -1 when
 * the fix for its failure was saved and the loop goes on. `probe` is the run's probe (NULL for the
 * log given with --log); under a probe any OOM is the try's failure, a survived one too. */
static int judge(struct loop *L, const struct retry_try *t, const struct retry_try_result *tr,
		 const struct retry_probe *probe, struct loaded *l)
{
	struct err e;
	err_clear(&e);
	struct diag_result *v = calloc(1, sizeof *v);
	struct diag_job_info info = { l->j->name, (int)l->j->kind, job_is_conservative(l->j) ? 1 : 0 };
	if (!v)
		return fail_err(L, (err_set(&e, ERR_SOFTWARE, NULL, 0, 0, "%s", strerror(ENOMEM)), &e));
	if (diag_file(t->log, &info, v, &e) != ERR_OK) {
		free(v);
		return fail_err(L, &e);
	}
	if (L->card <= 0 && v->memory.present && v->memory.capacity > 0)
		L->card = v->memory.capacity; /* no --vram, no nvidia-smi: the OOM message's card */
	/* what the try's OOM measured, for the estimate of the next try and of every later run */
	measure_record_diag(l->j, v, t->log);
	const char *mnote = measure_note();
	if (mnote)
		retry_tell_note(L->sinks, t, mnote);
	char words[400], label[64], summary[1024], text[1024];
	verdict_words(v, words, sizeof words);
	try_label(t, label, sizeof label);
	bool probing = probe && probe->steps > 0;
	/* The log decides, not the exit status alone: a command that hides the trainer's status
	 * (`... | tee log`, a wrapper script) exits 0 over an out-of-memory that ended the run. */
	/* The same for a failure that is not of memory: a traceback the log ends on is no "fits". */
	bool finished = tr->exited_zero && !(v->oom && (!v->survived || probing)) &&
			!(!v->oom && v->other != DIAG_O_NONE);
	summary_of(v, finished, words, summary, sizeof summary);
	struct retry_verdict rv = { v, label, words, summary,
				    tr->exited_zero && !finished &&
					    !(probe && probe->state == RETRY_PROBE_FAILED) };
	TELL(L->sinks, on_verdict, t, &rv);

	int status = -1;
	struct plan p;
	struct plan_decision d = { PLAN_NEXT_APPLY, FIX_NONE, DIAG_U_NONE, false };
	enum retry_next next = finished ? NEXT_FIX : retry_decide(l->j, v, &p, &d);
	/* E11: a change that did not move a now-and-then failure is not made twice in a row while
	 * the order has another that acts on it (batch size 1 before a second bucket drop) */
	if (next == NEXT_FIX && !finished && plan_after_unmoved(&p, l->j, v, L->last_fix, L->prev_fail))
		d.fix = p.first_fix;
	/* the decision's words, as every front end says them */
	char said[768] = "";
	if (!finished)
		plan_decision_text(&d, &p, l->j, said, sizeof said);
	if (finished) {
		status = end_fits(L, t, l->j, v, words);
	} else if (next == NEXT_NOT_OOM) {
		const char *other = diag_other_name(v->other);
		const char *why = other ? other : _("see the log");
		char head[1024];
		snprintf(head, sizeof head, _("%s failed, but not for GPU memory (%s): no memory fix "
					      "applies; see oomfix diagnose %s"), label, why, t->log);
		snprintf(text, sizeof text, _("The run failed, but not for GPU memory (%s). %s"), why,
			 said);
		status = finish(L, RETRY_OUT_NOT_OOM, ERR_DATA, head, said, text, NULL);
	} else if (next != NEXT_FIX) {
		char head[600];
		if (next == NEXT_WORKER)
			snprintf(head, sizeof head, "%s: %s → %s", label, words, fix_name(FIX_FRESH_WORKER));
		else if (next == NEXT_UNKNOWN)
			snprintf(head, sizeof head, _("%s: %s; oomfix diagnose %s shows what the log does "
						      "show"), label, words, t->log);
		else
			snprintf(head, sizeof head, "%s: %s", label, words);
		enum retry_outcome oc = next == NEXT_WORKER    ? RETRY_OUT_WORKER
					: next == NEXT_UNKNOWN ? RETRY_OUT_UNKNOWN
							       : RETRY_OUT_EXHAUSTED;
		status = finish(L, oc, ERR_UNAVAILABLE, head, said, said, NULL);
	} else if (t->index == L->o->max_tries) {
		/* One change, then a run: a change no run will test is not made. */
		char head[600];
		snprintf(head, sizeof head, _("try %d: %s; stopping after %d tries (the next fix would "
					      "be %s)."), t->index, words, L->o->max_tries,
			 fix_name(d.fix));
		snprintf(text, sizeof text, _("Stopped after %d tries; the next fix would be %s."),
			 L->o->max_tries, fix_name(d.fix));
		status = finish(L, RETRY_OUT_MAX_TRIES, ERR_UNAVAILABLE, head, NULL, text, NULL);
	} else {
		if (p.unmoved_step > 0) /* why not the same change again */
			retry_tell_note(L->sinks, t, said);
		if (apply_fix(L, t, l, d.fix, label, words, v, &e) != ERR_OK) {
			status = fail_err(L, &e);
		} else {
			L->prev_fail = v->failed_step > 0 ? v->failed_step : 0;
			L->last_fix = d.fix;
		}
	}
	free(v);
	return status;
}

/* A web UI job that is running is the UI's: the loop starts its runs itself (75). */
static int refuse_running(struct loop *L, const struct source *s)
{
	char head[512], text[512];
	snprintf(head, sizeof head, _("%s is running in the web UI; oomfix starts the runs itself: "
				      "stop it there (or let it end), then try again."), source_label(s));
	snprintf(text, sizeof text, _("%s is running in the web UI: stop it there (or let it end), "
				      "then try again."), source_label(s));
	return finish(L, RETRY_OUT_ERROR, ERR_TEMPFAIL, head, NULL, text, NULL);
}

/* True when the log shows an OOM the job did not survive; false with e set when it cannot be read. */
static bool log_shows_oom(const char *log, const struct job *j, struct err *e)
{
	struct diag_result *v = calloc(1, sizeof *v);
	struct diag_job_info info = { j->name, (int)j->kind, job_is_conservative(j) ? 1 : 0 };
	if (!v) {
		err_set(e, ERR_SOFTWARE, NULL, 0, 0, "%s", strerror(ENOMEM));
		return false;
	}
	bool oom = diag_file(log, &info, v, e) == ERR_OK && v->oom && !v->survived;
	free(v);
	return oom;
}

/* --log LOG: LOG is the log of a run of JOB as it is now. Its failure is known, so its fix is
 * applied before the first run instead of repeating that run (it is "try 0": one change, then a
 * run, as ever). Refused (75) when a change was saved after LOG was written: LOG cannot show
 * whether that change helped. Returns the loop's exit status, or -1 to go on. */
static int start_from_log(struct loop *L)
{
	const struct retry_opts *o = L->o;
	struct err e;
	err_clear(&e);
	struct loaded l;
	int status = -1;
	if (open_job(o->job, &l, &e) != ERR_OK)
		return fail_err(L, &e);
	time_t changed;
	struct retry_try t = { 0, 0, o->max_tries, o->from_log, -1, l.s, l.j, NULL, L->card };
	char line[1024];
	if (source_log_untried(l.s, o->from_log, &changed)) {
		/* the one decision's answer, in its words (SPEC §3.4), and what the loop can do */
		struct plan p;
		char words[768];
		plan_build(l.j, NULL, &p);
		struct plan_decision d = plan_decide(&p, NULL, true);
		plan_decision_text(&d, &p, l.j, words, sizeof words);
		err_set(&e, ERR_TEMPFAIL, o->from_log, 0, 0, _("%s Retry without --log runs the job "
							       "first."), words);
		status = fail_err(L, &e);
	} else if (source_running(l.s)) {
		status = refuse_running(L, l.s);
	} else if (!log_shows_oom(o->from_log, l.j, &e)) {
		if (e.code) {
			status = fail_err(L, &e);
		} else {
			snprintf(line, sizeof line, _("%s shows no GPU out-of-memory error; the first run "
						      "is of the job as it is."), o->from_log);
			retry_tell_note(L->sinks, NULL, line);
		}
	} else {
		snprintf(line, sizeof line, _("starting from %s"), o->from_log);
		retry_tell_note(L->sinks, NULL, line);
		TELL(L->sinks, on_try, &t);
		L->last = &t;
		struct retry_try_result tr = { .end = RETRY_RAN, .step = -1 };
		status = judge(L, &t, &tr, NULL, &l);
		forget_try(L, &t);
	}
	close_job(&l);
	return status;
}

/* Before a try: when other processes hold so much of the job's card now that a job that fits
 * the card alone does not fit beside them, the settings are not what is wrong: the loop stops
 * with the E answer (fresh_worker), naming them, instead of cutting the job. -1: go on. */
static int card_taken(struct loop *L, const struct loaded *l, int index)
{
	struct est_gpus *g = L->o->ask_smi ? calloc(1, sizeof *g) : NULL;
	struct err e;
	err_clear(&e);
	int status = -1;
	if (!g || estimate_query_gpus(g, &e) != ERR_OK) {
		free(g);
		return -1;
	}
	int want = source_gpu(l->s) >= 0 ? source_gpu(l->s) : 0;
	const struct est_gpu *gpu = NULL;
	for (size_t i = 0; i < g->n; i++)
		if (g->gpu[i].index == want)
			gpu = &g->gpu[i];
	if (gpu && L->card <= 0)
		L->card = gpu->total; /* no --vram: the job's card, as nvidia-smi lists it */
	int64_t others = est_card_others(gpu, NULL);
	if (gpu && others > 0) {
		struct estimate est;
		estimate_job(l->j, &est);
		int64_t card = L->card > 0 ? L->card : gpu->total;
		enum est_phase at;
		enum est_verdict alone = estimate_verdict(&est, card, NULL);
		enum est_verdict beside = estimate_verdict_beside(&est, card, others, &at);
		if (est.known && alone != EST_V_NO && beside == EST_V_NO) {
			char ob[32], procs[400] = "", head[900], text[900];
			estimate_gib(others, ob, sizeof ob);
			for (size_t i = 0; i < gpu->napps; i++) {
				char pb[32], one[64];
				estimate_gib(gpu->app[i].bytes, pb, sizeof pb);
				snprintf(one, sizeof one, _("%spid %lld (%s)"), i ? ", " : "",
					 gpu->app[i].pid, pb);
				strncat(procs, one, sizeof procs - strlen(procs) - 1);
			}
			snprintf(head, sizeof head, _("before try %d: other processes hold %s on GPU %d "
						      "now%s%s%s; the job fits the card alone but not "
						      "beside them (%s) → %s; nothing changed"),
				 index, ob, gpu->index, procs[0] ? " (" : "", procs,
				 procs[0] ? ")" : "", est_phase_label(at), fix_name(FIX_FRESH_WORKER));
			snprintf(text, sizeof text, _("Other processes hold %s of the card: stop them or "
						      "use another card; the job's settings are not "
						      "what is too big."), ob);
			status = finish(L, RETRY_OUT_WORKER, ERR_UNAVAILABLE, head, text, text, NULL);
		}
	}
	free(g);
	return status;
}

/* One try: load the job as it is, open its log, run it, decide. -1: go on. */
static int one_try(struct loop *L, const struct retry_runner_ops *rops, void *runner, int n,
		   int index)
{
	const struct retry_opts *o = L->o;
	struct err e;
	err_clear(&e);
	struct loaded l;
	if (open_job(o->job, &l, &e) != ERR_OK)
		return fail_err(L, &e);
	int status = -1;
	char *logpath = NULL;
	if (source_running(l.s)) {
		status = refuse_running(L, l.s);
		goto out;
	}
	if ((status = card_taken(L, &l, index)) != -1)
		goto out;
	if (asprintf(&logpath, "%s/%d.log", L->dir, n) < 0) {
		logpath = NULL;
		status = fail_err(L, (err_set(&e, ERR_SOFTWARE, NULL, 0, 0, "%s", strerror(ENOMEM)), &e));
		goto out;
	}
	/* O_EXCL: a name already taken, a planted link included, is refused, never followed. The
	 * log holds what the job prints: as private as the job. */
	int logfd = open(logpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
			 save_mode_for(source_path(l.s)));
	if (logfd < 0) {
		err_set(&e, ERR_CANTCREAT, logpath, 0, 0, _("cannot create it: %s"), strerror(errno));
		status = fail_err(L, &e);
		goto out;
	}
	struct estimate est;
	estimate_job(l.j, &est);
	struct retry_try t = { n, index, o->max_tries, logpath, logfd, l.s, l.j, &est, L->card };
	L->last = &t;
	TELL(L->sinks, on_try, &t);
	struct retry_probe probe;
	retry_probe_init(&probe, l.j, o->probe, L->prev_fail);
	struct retry_try_result tr;
	memset(&tr, 0, sizeof tr);
	int rc = rops->run(runner, &t, &probe, L->sinks, o->stop, &tr, &e);
	close(logfd);
	t.logfd = -1;
	if (rc)
		status = fail_err(L, &e);
	else if (tr.end == RETRY_RAN_INTERRUPTED)
		status = finish(L, RETRY_OUT_INTERRUPTED, 130, tr.head, NULL, tr.text, NULL);
	else if (tr.end == RETRY_RAN_STOPPED)
		status = finish(L, RETRY_OUT_STOPPED, 130, tr.head, NULL, tr.text, NULL);
	else if (tr.end == RETRY_RAN_NOT_STARTED)
		status = finish(L, RETRY_OUT_ERROR, ERR_UNAVAILABLE, tr.head, NULL, tr.text, NULL);
	else if (probe.state == RETRY_PROBE_PASSED)
		status = end_probe(L, &t, &probe);
	else
		status = judge(L, &t, &tr, &probe, &l);
	forget_try(L, &t);
out:
	free(logpath);
	close_job(&l);
	return status;
}

int retry_run(const struct retry_opts *o, const struct retry_runner_ops *rops, void *runner,
	      const struct retry_sinks *sinks)
{
	struct loop L = { .o = o, .sinks = sinks, .card = o->card, .last_fix = FIX_NONE };
	struct err e;
	err_clear(&e);
	struct loaded l;
	if (open_job(o->job, &l, &e) != ERR_OK)
		return fail_err(&L, &e);
	int rc = make_runs_dir(l.s, &L.dir, &e);
	close_job(&l);
	if (rc)
		return fail_err(&L, &e);
	int first = next_log_number(L.dir);
	int status = o->from_log ? start_from_log(&L) : -1;
	for (int t = 1; status == -1 && t <= o->max_tries; t++) {
		if (o->stop && *o->stop) {
			/* Ctrl-C while the last log was read or the fix saved: no new run is started */
			status = finish(&L, RETRY_OUT_INTERRUPTED, 130,
					_("interrupted before the next run."), NULL,
					_("Interrupted before the next run."), NULL);
			break;
		}
		status = one_try(&L, rops, runner, first + t - 1, t);
	}
	if (status == -1) /* cannot happen: the last try ends the loop one way or another */
		status = finish(&L, RETRY_OUT_ERROR, ERR_SOFTWARE, NULL, NULL, NULL, NULL);
	free(L.dir);
	return status;
}

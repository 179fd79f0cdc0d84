/* diag.c — see diag.h. One pass over the log's `\r` segments keeps a small state machine:
 * the config echo and traceback source lines are context, not output; progress bars move the
 * timeline (phase, step); error lines are matched against the signatures and grouped into
 * events, so that a message printed twice ("Error running job:" and the traceback) counts once.
 * Memory does not depend on the size of the log.
 *
 * This file takes the verdict from the state at the end and holds the entry points; the scan is
 * diag_scan.c and diag_bar.c, the JSON diag_json.c, following a growing log diag_follow.c (what
 * they share: diag_int.h). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oomfix/diag.h"
#include "oomfix/i18n.h"
#include "oomfix/json.h"
#include "oomfix/logidx.h"
#include "oomfix/save.h"
#include "oomfix/sig.h"
#include "oomfix/text.h"
#include "diag_int.h"

/* ---- the verdict ---- */

static void put_hit(struct diag_hit *h, const char *id, const struct snap *s, unsigned count,
		    const char *value)
{
	memset(h, 0, sizeof *h);
	h->id = id;
	snprintf(h->value, sizeof h->value, "%s", value ? value : "");
	h->line = s->line;
	h->offset = s->off;
	h->count = count;
	text_sanitize(s->text, s->len, h->text, sizeof h->text);
}

static void add_evidence(struct diag_result *r, const struct snap *s)
{
	size_t i;

	if (!s->set || r->nevidence >= DIAG_MAX_EVIDENCE)
		return;
	for (i = 0; i < r->nevidence; i++) /* a line can hold a bar frame and a message */
		if (r->evidence[i].line == s->line &&
		    !memcmp(r->evidence[i].text, s->text, s->len < 16 ? s->len : 16))
			return;
	/* keep them in line order */
	i = r->nevidence;
	while (i > 0 && r->evidence[i - 1].line > s->line) {
		r->evidence[i] = r->evidence[i - 1];
		i--;
	}
	put_hit(&r->evidence[i], NULL, s, 0, NULL);
	r->nevidence++;
}

static bool before_training(enum diag_phase p)
{
	return p == DIAG_P_MODEL_LOAD || p == DIAG_P_CACHING || p == DIAG_P_BASELINE_SAMPLING;
}

static void add_hint(struct diag_result *r, const char *id, const struct snap *s,
		     const char *value)
{
	if (r->nhints < sizeof r->hints / sizeof r->hints[0] && s->set)
		put_hit(&r->hints[r->nhints++], id, s, 1, value);
}

/* The numbers of the last OOM message, and the hints they give (SPEC §3.6). */
static void memory_account(struct dstate *st, struct diag_result *r)
{
	struct memacct *m = &r->memory;
	char v[64];

	memacct_init(m);
	if (!st->oom.valid || !st->oom.mem.present)
		return;
	*m = st->oom.mem;
	memacct_finish(m);
	/* the only process listed was this job itself (a container hides its pid): not a hint
	 * that another process held the card */
	if (m->this_pid >= 0 && m->nother == 0 && st->sig_snap[SIG_OTHER_PROCESS].line == st->oom.msg.line) {
		for (size_t i = 0; i < r->nhints; i++)
			if (!strcmp(r->hints[i].id, "other_process")) {
				memmove(&r->hints[i], &r->hints[i + 1], (r->nhints - i - 1) * sizeof r->hints[0]);
				r->nhints--;
				break;
			}
	}
	if (memacct_fragmented(m)) {
		memacct_format(m->pytorch_reserved_unallocated, v, sizeof v);
		add_hint(r, "fragmentation", &st->oom.msg, v);
	}
	if (m->limit >= 0) {
		memacct_format(m->limit, v, sizeof v);
		add_hint(r, "memory_fraction", &st->oom.msg, v);
	}
}

/* What a fatal error that is not a GPU OOM was, from the signatures seen in error output. */
static enum diag_other death_cause(const struct dstate *st)
{
	if (st->death & SIG_BIT(SIG_MISSING_FILE))
		return DIAG_O_MISSING_FILE;
	if (st->death & SIG_BIT(SIG_HF_AUTH))
		return DIAG_O_HF_AUTH;
	if (st->death & SIG_BIT(SIG_CONFIG_ERROR))
		return DIAG_O_CONFIG_ERROR;
	return DIAG_O_PYTHON_ERROR;
}

/* The signatures and hints counted, into r->sigs and r->hints; true when one of them is an
 * OOM. */
static bool collect_hits(const struct dstate *st, struct diag_result *r)
{
	bool any_oom = false;

	for (int i = 0; i < SIG_COUNT; i++) {
		if (!st->count[i])
			continue;
		/* cuBLAS failing to start later in a run is not about memory (SPEC §3.6) */
		if (i == SIG_CUBLAS_NOT_INIT && st->cublas_ni_late)
			continue;
		if (sig_defs[i].cls == SIG_CLASS_OOM)
			any_oom = true;
		if (sig_defs[i].cls == SIG_CLASS_HINT) {
			if (r->nhints < sizeof r->hints / sizeof r->hints[0])
				put_hit(&r->hints[r->nhints++], sig_defs[i].name, &st->sig_snap[i],
					st->count[i], st->sig_cap[i]);
		} else if (r->nsigs < DIAG_MAX_SIGS) {
			put_hit(&r->sigs[r->nsigs++], sig_defs[i].name, &st->sig_snap[i], st->count[i],
				st->sig_cap[i]);
		}
	}
	return any_oom;
}

/* The phase the OOM that ended the run happened in (r->phase), and its step (r->failed_step). */
static enum diag_phase oom_phase(const struct dstate *st, struct diag_result *r)
{
	const struct oom_event *o = &st->oom;
	enum diag_phase p = o->phase;
	if (o->tb_phase == DIAG_P_SAMPLING)
		p = o->train_started ? DIAG_P_SAMPLING : DIAG_P_BASELINE_SAMPLING;
	else if (o->tb_phase != DIAG_P_NONE)
		p = o->tb_phase;
	if (p == DIAG_P_SAMPLING && !o->train_started)
		p = DIAG_P_BASELINE_SAMPLING;
	r->phase = p;
	if (p == DIAG_P_TRAINING && o->bar_n >= 0)
		r->failed_step = o->bar_n + 1;
	else if (p == DIAG_P_TRAINING && st->train_started && st->bar_max == 0)
		r->failed_step = 1; /* the only training bar never left 0: step 1 (SPEC §3.3) */
	else if (p == DIAG_P_SAMPLING && o->bar_n >= 0)
		r->failed_step = o->bar_n;
	else if (p == DIAG_P_SAVING)
		r->failed_step = o->save_step >= 0 ? o->save_step : o->bar_n;
	return p;
}

/* An OOM that ended the run: when (the timing, SPEC §3.3), and the lines that show it. */
static void verdict_died(struct dstate *st, struct diag_result *r)
{
	const struct diag_job_info *job = st->job;
	const struct oom_event *o = &st->oom;
	enum diag_phase p = oom_phase(st, r);
	bool before = before_training(p);
	bool step1 = p == DIAG_P_TRAINING && r->failed_step == 1;

	/* the quarter/half rule's sentence says it when it holds; otherwise the job would have
	 * fitted alone, and the processes in its way are named */
	r->fitted_alone = !memacct_environment(&r->memory) && memacct_fits_alone(&r->memory);

	if (memacct_environment(&r->memory) || r->fitted_alone) {
		/* the numbers show the card held by others: whatever the phase (SPEC §3.6) */
		r->timing = DIAG_T_ENVIRONMENT;
	} else if (job && job->conservative == 1 && (before || step1) &&
	    (st->count[SIG_ZERO_BYTES_FREE] || st->count[SIG_CUBLAS_ALLOC_FAILED])) {
		r->timing = DIAG_T_ENVIRONMENT;
		add_evidence(r, &st->sig_snap[st->count[SIG_CUBLAS_ALLOC_FAILED]
					      ? SIG_CUBLAS_ALLOC_FAILED : SIG_ZERO_BYTES_FREE]);
		if (st->count[SIG_OTHER_PROCESS])
			add_evidence(r, &st->sig_snap[SIG_OTHER_PROCESS]);
	} else if (before) {
		r->timing = DIAG_T_BEFORE_TRAINING;
		r->failed_step = -1;
	} else if (p == DIAG_P_NONE || (p == DIAG_P_TRAINING && r->failed_step < 0)) {
		/* no marker, frame or bar shows when (or which step): say so, never guess */
		r->timing = DIAG_T_NONE;
		r->unknown = p == DIAG_P_NONE ? DIAG_U_NO_PHASE : DIAG_U_NO_STEP;
	} else if (p == DIAG_P_SAMPLING) {
		r->timing = DIAG_T_SAMPLING;
	} else if (r->failed_step <= 10) {
		r->timing = DIAG_T_FIRST_STEPS;
	} else {
		r->timing = DIAG_T_INTERMITTENT;
	}
	if (before)
		r->failed_step = -1;
	if (p != DIAG_P_TRAINING)
		add_evidence(r, &o->marker);
	add_evidence(r, &o->bar);
	add_evidence(r, &o->msg);
	add_evidence(r, &o->frame);
	if (st->fatal_seen)
		add_evidence(r, &st->fatal);
	for (unsigned i = 0; i < 3 && i < st->nskip; i++)
		add_evidence(r, &st->skip[i]);
}

/* No step after the last skip banner: it was not survived (SPEC §3.3). */
static void verdict_skip_open(struct dstate *st, struct diag_result *r)
{
	r->phase = DIAG_P_TRAINING;
	r->failed_step = st->skip_step;
	if (!st->skip_crash) {
		/* the log ends there: whether the run went on is not shown */
		r->timing = DIAG_T_NONE;
		r->unknown = DIAG_U_SKIP_OUTCOME;
	} else {
		/* it died at once, of the skipped batch: the skip was the failure */
		r->skip_crashed = true;
		r->timing = st->skip_step < 0	? DIAG_T_NONE
			    : st->skip_step <= 10 ? DIAG_T_FIRST_STEPS
						  : DIAG_T_INTERMITTENT;
		if (st->skip_step < 0)
			r->unknown = DIAG_U_NO_STEP;
	}
	add_evidence(r, &st->bar);
	for (unsigned i = 0; i < 3 && i < st->nskip; i++)
		add_evidence(r, &st->skip[i]);
	if (st->skip_crash)
		add_evidence(r, &st->skip_fatal);
}

/* OOMs the trainer caught and went on after, to a later step: survived, unless an error ended
 * the run after that (then only what is known is said). */
static void verdict_caught(struct dstate *st, struct diag_result *r)
{
	bool caught_sample = !st->nskip && st->oom.valid && st->oom.caught &&
			     (st->oom.phase == DIAG_P_SAMPLING ||
			      st->oom.phase == DIAG_P_BASELINE_SAMPLING);
	r->timing = caught_sample ? DIAG_T_SAMPLING : DIAG_T_INTERMITTENT;
	r->phase = caught_sample ? DIAG_P_SAMPLING : DIAG_P_TRAINING;
	r->survived = !st->fatal_seen;
	r->failed_step = st->nskip ? st->skip_step : st->oom.fail_step;
	for (unsigned i = 0; i < 3 && i < st->nskip; i++)
		add_evidence(r, &st->skip[i]);
	if (st->oom.valid)
		add_evidence(r, &st->oom.msg);
	add_evidence(r, &st->bar);
	if (st->fatal_seen) {
		r->other = death_cause(st);
		add_evidence(r, &st->fatal);
	}
}

/* No OOM: the host ran out of RAM, or what the run died of. */
static void verdict_no_oom(struct dstate *st, struct diag_result *r)
{
	r->timing = DIAG_T_NONE;
	r->phase = DIAG_P_NONE;
	if (st->count[SIG_HOST_OOM]) {
		r->other = DIAG_O_HOST_OOM;
		add_evidence(r, &st->host);
	} else if (st->fatal_seen) {
		r->other = death_cause(st);
		add_evidence(r, &st->fatal);
	}
	add_evidence(r, &st->bar);
}

void dg_verdict(struct dstate *st)
{
	struct diag_result *r = st->out;
	const struct diag_job_info *job = st->job;
	bool any_oom = collect_hits(st, r);

	r->oom = any_oom;
	memory_account(st, r);
	r->total_steps = st->bar_total > 0 ? st->bar_total : -1;
	r->failed_step = -1;
	r->model_kind = job ? job->kind : 0;
	if (any_oom && st->oom.valid && !st->oom.survived)
		verdict_died(st, r);
	else if (any_oom && st->nskip && st->skip_open)
		verdict_skip_open(st, r);
	else if (any_oom)
		verdict_caught(st, r);
	else
		verdict_no_oom(st, r);
}

/* Where the run stands at the end of what was read: the live header of a followed log. */
void dg_progress_now(const struct dstate *st, struct diag_result *r)
{
	const char *t = st->bar.text, *end = t + st->bar.len, *p, *q;

	r->run_ended = st->run_ended;
	r->stopped = st->stopped;
	r->now_phase = st->phase;
	r->now_step = st->train_started ? st->bar_n : -1;
	r->now_rate[0] = '\0';
	if (!st->bar.set)
		return;
	/* "[04:10<1:19:12,  1.67s/it, lr: ...]": the field after the times */
	p = memchr(t, '[', st->bar.len);
	p = p ? memchr(p, ',', (size_t)(end - p)) : NULL;
	if (!p)
		return;
	for (p++; p < end && *p == ' '; p++)
		;
	for (q = p; q < end && *q != ',' && *q != ']' && *q != ' '; q++)
		;
	if (q - p >= 4 && (size_t)(q - p) < sizeof r->now_rate &&
	    (!memcmp(q - 4, "s/it", 4) || !memcmp(q - 4, "it/s", 4)))
		snprintf(r->now_rate, sizeof r->now_rate, "%.*s", (int)(q - p), p);
}

/* A fresh scan state for one log. NULL when out of memory or when the patterns do not compile
 * (then e says why). Free with dg_dstate_free. */
struct dstate *dg_dstate_new(const struct diag_job_info *job, struct diag_result *out,
				 const char *name, struct err *e)
{
	struct dstate *st = calloc(1, sizeof *st);

	if (!st) {
		err_set(e, ERR_SOFTWARE, name, 0, 0, _("out of memory"));
		return NULL;
	}
	st->job = job;
	st->out = out;
	st->bar_n = st->bar_total = st->save_step = st->skip_step = st->bar_max = -1;
	st->scratch_cap = LOGIDX_SEG_CAP;
	st->scratch = malloc(st->scratch_cap);
	if (job && job->name && *job->name) {
		size_t l = strlen(job->name);
		st->namelen = l < sizeof st->name ? l : sizeof st->name;
		memcpy(st->name, job->name, st->namelen);
		st->name_from_job = true;
	}
	if (!st->scratch) {
		err_set(e, ERR_SOFTWARE, name, 0, 0, _("out of memory"));
		free(st);
		return NULL;
	}
	if (sig_matcher_new(&st->sm, e) != ERR_OK) {
		free(st->scratch);
		free(st);
		return NULL;
	}
	return st;
}

void dg_dstate_free(struct dstate **pst)
{
	if (!*pst)
		return;
	sig_matcher_free(&(*pst)->sm);
	free((*pst)->scratch);
	free(*pst);
	*pst = NULL;
}

void dg_result_init(struct diag_result *out)
{
	memset(out, 0, sizeof *out);
	out->failed_step = -1;
	out->total_steps = -1;
}

static int run(struct logidx *li, const struct diag_job_info *job, struct diag_result *out,
	       struct err *e)
{
	struct dstate *st;
	int rc;

	dg_result_init(out);
	st = dg_dstate_new(job, out, logidx_name(li), e);
	if (!st)
		return e && e->code ? e->code : ERR_SOFTWARE;
	rc = logidx_scan(li, dg_on_seg, st, e);
	if ((rc == ERR_OK || rc == ERR_DATA) && dg_not_text(st)) {
		dg_result_init(out);
		rc = dg_refuse_binary(st, logidx_name(li), e);
	}
	if (rc == ERR_OK) {
		uint64_t lines = 0;
		dg_verdict(st);
		dg_progress_now(st, out);
		logidx_count_lines(li, &lines, NULL);
		out->lines = lines;
		out->bytes = logidx_size(li);
		out->truncated = logidx_truncated(li);
		out->warnings = sig_warnings(st->sm);
	}
	dg_dstate_free(&st);
	return rc;
}

int diag_logidx(struct logidx *li, const struct diag_job_info *job, struct diag_result *out,
		struct err *e)
{
	return run(li, job, out, e);
}

int diag_file(const char *path, const struct diag_job_info *job, struct diag_result *out,
	      struct err *e)
{
	struct logidx *li;
	int rc = logidx_open(path, &li, e);

	if (rc) {
		memset(out, 0, sizeof *out);
		out->failed_step = out->total_steps = -1;
		return rc;
	}
	rc = run(li, job, out, e);
	logidx_close(&li);
	return rc;
}

int diag_buffer(const char *buf, size_t len, const struct diag_job_info *job,
		struct diag_result *out, struct err *e)
{
	struct logidx *li;
	int rc = logidx_open_buffer("(buffer)", buf, len, &li, e);

	if (rc)
		return rc;
	rc = run(li, job, out, e);
	logidx_close(&li);
	return rc;
}

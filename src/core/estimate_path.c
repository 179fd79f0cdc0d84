/* estimate_path.c — the path to a fitting job (SPEC §12): the fixes the plan would choose for the
 * phase that does not fit, applied to a copy and estimated again; the rungs of a step fix. */
#include <stdlib.h>
#include <string.h>

#include "oomfix/diag.h"
#include "oomfix/doc.h"
#include "oomfix/estimate.h"
#include "oomfix/i18n.h"

/* SPEC §3.4's decision, asked as if the run had failed in that phase. */
static const struct {
	enum diag_timing timing;
	enum diag_phase phase;
} as_failure[EST_NPHASES] = {
	[EST_MODEL_LOAD] = { DIAG_T_BEFORE_TRAINING, DIAG_P_MODEL_LOAD },
	[EST_CACHING] = { DIAG_T_BEFORE_TRAINING, DIAG_P_CACHING },
	[EST_BASELINE_SAMPLE] = { DIAG_T_SAMPLING, DIAG_P_BASELINE_SAMPLING },
	[EST_TRAINING] = { DIAG_T_FIRST_STEPS, DIAG_P_TRAINING },
	[EST_SAMPLING] = { DIAG_T_SAMPLING, DIAG_P_SAMPLING },
};

enum fix_id est_next_fix(const struct job *j, enum est_phase at)
{
	struct diag_result *v = calloc(1, sizeof *v);
	if (!v)
		return FIX_NONE;
	v->oom = true;
	v->timing = as_failure[at].timing;
	v->phase = as_failure[at].phase;
	v->failed_step = -1;
	v->total_steps = -1;
	v->model_kind = (int)j->kind;
	struct plan p;
	plan_build(j, v, &p);
	struct plan_decision d = plan_decide(&p, v, false);
	free(v);
	return d.what == PLAN_NEXT_APPLY ? d.fix : FIX_NONE;
}

void estimate_path_free(struct est_path *p)
{
	job_free(&p->job);
	doc_free(&p->doc);
	p->n = 0;
}

int estimate_path(const struct job *j, int64_t card, bool keep_batch, size_t max_steps,
		  struct est_path *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	const struct job *cur = j;
	struct estimate est;
	estimate_job(cur, &est);
	enum est_phase at;
	enum est_verdict v = estimate_verdict(&est, card, &at);
	/* Until it fits: a tight job takes the next change too, while one is left. */
	size_t limit = max_steps && max_steps < EST_MAX_PATH ? max_steps : EST_MAX_PATH;
	while (v != EST_V_FITS && out->n < limit) {
		enum fix_id id = est_next_fix(cur, at);
		if (id == FIX_NONE) {
			out->exhausted = v == EST_V_NO;
			out->stuck = at;
			break;
		}
		/* The fix as after a failure in that phase: a training step's frames are halved,
		 * the previews keep theirs. */
		struct fix_edit_list l;
		int rc = fix_edits_after(cur, id, keep_batch, (int)as_failure[at].phase, &l, e);
		if (rc)
			return rc;
		struct doc *nd = NULL;
		struct job *nj = NULL;
		if (l.n) {
			rc = doc_apply(cur->doc, l.edits, l.n, &nd, e);
			if (!rc)
				rc = job_from_doc(nd, &nj, e);
		}
		fix_edits_free(&l);
		if (rc || !nj) {
			doc_free(&nd);
			if (rc)
				return rc;
			/* the fix changed nothing: stop rather than loop */
			out->exhausted = v == EST_V_NO;
			out->stuck = at;
			break;
		}
		job_free(&out->job);
		doc_free(&out->doc);
		out->doc = nd;
		out->job = nj;
		cur = nj;
		struct est_step *s = &out->step[out->n++];
		s->fix = id;
		s->phase = at;
		estimate_job(cur, &s->after);
		v = s->verdict = estimate_verdict(&s->after, card, &s->at);
		at = s->at;
	}
	out->fits = v == EST_V_FITS || v == EST_V_TIGHT;
	out->short_clip = out->low_bucket = false;
	if (out->n && out->job) {
		/* what the path leaves that a user would not train on without being told */
		for (size_t i = 0; i < out->job->ndatasets; i++)
			if (out->job->datasets[i].num_frames > 1 &&
			    out->job->datasets[i].num_frames < EST_SHORT_CLIP &&
			    out->job->kind == JOB_KIND_VIDEO)
				out->short_clip = true;
		out->low_bucket = job_max_bucket(out->job) <= 512 && job_max_bucket(j) > 512;
	}
	return ERR_OK;
}

int estimate_plan_after(const struct job *j, const enum fix_id *fixes, size_t n,
			struct estimate *after, bool *changed, struct err *e)
{
	struct doc *docs[EST_MAX_PATH] = { 0 };
	struct job *jobs[EST_MAX_PATH] = { 0 };
	size_t nk = 0;
	const struct job *cur = j;
	struct estimate est;
	int rc = ERR_OK;
	estimate_job(cur, &est);
	for (size_t i = 0; i < n; i++) {
		bool did = false;
		if (rc == ERR_OK && nk < EST_MAX_PATH && fixes[i] != FIX_NONE &&
		    fixes[i] != FIX_FRESH_WORKER && fix_status(cur, fixes[i], NULL, 0) == FIX_TODO) {
			struct fix_edit_list l;
			rc = fix_edits(cur, fixes[i], false, &l, e); /* frees l itself when it fails */
			struct doc *nd = NULL;
			struct job *nj = NULL;
			if (rc == ERR_OK) {
				if (l.n)
					rc = doc_apply(cur->doc, l.edits, l.n, &nd, e);
				if (rc == ERR_OK && nd)
					rc = job_from_doc(nd, &nj, e);
				fix_edits_free(&l);
			}
			if (nj) {
				docs[nk] = nd;
				jobs[nk++] = nj;
				cur = nj;
				estimate_job(cur, &est);
				did = true;
			} else {
				doc_free(&nd);
			}
		}
		after[i] = est;
		if (changed)
			changed[i] = did;
	}
	for (size_t k = 0; k < nk; k++) {
		job_free(&jobs[k]);
		doc_free(&docs[k]);
	}
	return rc;
}

/* The model's bytes for phase p of job j, without the measurements: what a rung takes off is
 * the model's difference, whatever a measurement moved the number to. */
static int64_t model_bytes(const struct job *j, enum est_phase p)
{
	struct est_input in;
	struct estimate est;
	est_input_of(j, &in);
	if (estimate_input(&in, &est) || !est.known || !est.phase[p].on)
		return -1;
	return est.phase[p].bytes;
}

/* Down the rungs of `step`: until one fits `card` (never when card <= 0) and, with a shortfall,
 * has taken off what it measured; or its floor, or `max`. A walk that never does both ends at
 * the first rung that covers the shortfall (at the floor when none does). */
static int walk_rungs(const struct job *j, enum fix_id step, int phase, int64_t card,
		      struct est_shortfall *sf, int max, int *rungs, bool *fits, struct doc **out,
		      struct err *e)
{
	*rungs = 0;
	*fits = false;
	int64_t from = sf ? model_bytes(j, sf->phase) : -1;
	if (sf) {
		sf->removed = 0;
		sf->covered = false;
		if (from < 0)
			sf = NULL; /* no model of that phase: the band alone decides */
	}
	int cover_rungs = 0; /* the first rung that covers the shortfall */
	int64_t cover_removed = 0;
	if (out)
		*out = NULL;
	if (step != FIX_NUM_FRAMES && step != FIX_DROP_LARGEST_BUCKET) {
		err_set(e, ERR_DATA, NULL, 0, 0, "%s", _("only a step fix goes down by rungs"));
		return ERR_DATA;
	}
	struct doc *cur_doc = NULL;
	struct job *cur = NULL;
	const struct job *at = j;
	int rc = ERR_OK;
	for (int i = 0; i < max; i++) {
		struct fix_edit_list l;
		if (fix_status(at, step, NULL, 0) != FIX_TODO)
			break;
		if ((rc = fix_edits_after(at, step, true, phase, &l, e)))
			break;
		struct doc *nd = NULL;
		struct job *nj = NULL;
		if (l.n && !(rc = doc_apply(at->doc, l.edits, l.n, &nd, e)))
			rc = job_from_doc(nd, &nj, e);
		fix_edits_free(&l);
		if (rc || !nj) {
			doc_free(&nd);
			break;
		}
		job_free(&cur);
		doc_free(&cur_doc);
		cur = nj;
		cur_doc = nd;
		at = cur;
		(*rungs)++;
		struct estimate est;
		estimate_job(at, &est);
		/* After a failed training step or caching pass the step fix acts on that phase alone
		 * (the previews keep their frames): its band top is what must fit. Otherwise the
		 * whole job's verdict. */
		bool fit;
		enum est_phase only = phase == DIAG_P_TRAINING ? EST_TRAINING
				      : phase == DIAG_P_CACHING ? EST_CACHING : EST_NPHASES;
		if (only < EST_NPHASES && est.known && card > 0)
			fit = !est.phase[only].on || est.phase[only].high <= card;
		else
			fit = estimate_verdict(&est, card, NULL) == EST_V_FITS;
		int64_t removed = 0;
		if (sf) {
			int64_t now = model_bytes(at, sf->phase);
			removed = now >= 0 ? from - now : 0;
			if (removed >= sf->bytes && !cover_rungs) {
				cover_rungs = *rungs;
				cover_removed = removed;
			}
		}
		if (fit && (!sf || removed >= sf->bytes)) {
			*fits = true;
			if (sf) {
				sf->removed = removed;
				sf->covered = true;
			}
			cover_rungs = 0;
			break;
		}
		if (sf)
			sf->removed = removed;
	}
	job_free(&cur);
	if (sf && !*fits && cover_rungs && !rc) {
		/* the measured shortfall is covered before the band fits: that far, and the next
		 * run tells */
		doc_free(&cur_doc);
		int again;
		bool f;
		rc = walk_rungs(j, step, phase, 0, NULL, cover_rungs, &again, &f,
				out ? &cur_doc : NULL, e);
		*rungs = again;
		sf->removed = cover_removed;
		sf->covered = true;
	}
	if (rc || !out)
		doc_free(&cur_doc);
	else
		*out = cur_doc;
	return rc;
}

int estimate_rungs(const struct job *j, enum fix_id step, int phase, int64_t card,
		   struct est_shortfall *sf, int *rungs, bool *fits, struct doc **out,
		   struct err *e)
{
	return walk_rungs(j, step, phase, card, sf, 32, rungs, fits, out, e);
}

int estimate_rung_doc(const struct job *j, enum fix_id step, int n, struct doc **out,
		      struct err *e)
{
	int rungs;
	bool fits;
	return walk_rungs(j, step, 0, 0, NULL, n, &rungs, &fits, out, e);
}

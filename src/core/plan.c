/* plan.c — the guide's rollback order as a plan with done marks, the first fix for a verdict
 * (SPEC §3.4), the quick checklist and the scale-up order after a successful retry (SPEC §4).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "oomfix/i18n.h"
#include "oomfix/json.h"
#include "oomfix/plan.h"

static const enum fix_id image_order[] = { FIX_GRADIENT_CHECKPOINTING, FIX_BATCH_SIZE,
					   FIX_DROP_LARGEST_BUCKET, FIX_LIGHTER_SAMPLING,
					   FIX_DISABLE_SAMPLING, FIX_LOW_VRAM };
static const enum fix_id video_order[] = { FIX_NUM_FRAMES, FIX_BATCH_SIZE, FIX_DROP_LARGEST_BUCKET,
					   FIX_LIGHTER_SAMPLING, FIX_DISABLE_SAMPLING, FIX_LOW_VRAM };

static enum fix_status step_status(const struct plan *p, const struct job *j, enum fix_id id)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->steps[i].fix == id)
			return p->steps[i].status;
	return j ? fix_status(j, id, NULL, 0) : FIX_TODO;
}

static void accept(struct plan *p, enum fix_id id)
{
	for (size_t i = 0; i < p->naccept; i++)
		if (p->accept[i] == id)
			return;
	if (p->naccept < sizeof p->accept / sizeof p->accept[0])
		p->accept[p->naccept++] = id;
}

enum fix_id plan_next_step(const struct plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->steps[i].status == FIX_TODO)
			return p->steps[i].fix;
	return FIX_NONE;
}

/* The fixes that change the memory of a phase, in the order they are tried (SPEC §3.4 table).
 * Returns how many; 0 for a phase the log does not show (then every fix may help). */
static size_t phase_fixes(enum diag_phase ph, bool video, enum fix_id out[6])
{
	size_t n = 0;
	switch (ph) {
	case DIAG_P_MODEL_LOAD:
		/* low_vram also turns on quantization of the model and the text encoder. */
		out[n++] = FIX_LOW_VRAM;
		break;
	case DIAG_P_CACHING:
		if (video)
			out[n++] = FIX_NUM_FRAMES;
		out[n++] = FIX_DROP_LARGEST_BUCKET;
		out[n++] = FIX_LOW_VRAM;
		break;
	case DIAG_P_BASELINE_SAMPLING:
	case DIAG_P_SAMPLING:
		out[n++] = FIX_LIGHTER_SAMPLING;
		out[n++] = FIX_DISABLE_SAMPLING;
		out[n++] = FIX_LOW_VRAM;
		break;
	case DIAG_P_TRAINING:
	case DIAG_P_SAVING: /* a save runs with the training state on the card */
		out[n++] = video ? FIX_NUM_FRAMES : FIX_GRADIENT_CHECKPOINTING;
		out[n++] = FIX_BATCH_SIZE;
		out[n++] = FIX_DROP_LARGEST_BUCKET;
		out[n++] = FIX_LOW_VRAM;
		break;
	default:
		break;
	}
	return n;
}

bool plan_fix_helps(enum fix_id id, enum diag_phase phase, int kind)
{
	enum fix_id f[6];
	size_t n = phase_fixes(phase, kind == JOB_KIND_VIDEO, f);
	if (id == FIX_FRESH_WORKER || id == FIX_NONE)
		return false;
	if (!n)
		return true;
	for (size_t i = 0; i < n; i++)
		if (f[i] == id)
			return true;
	return false;
}

const char *plan_no_help_label(void)
{
	return _("does not help this failure");
}

void plan_build(const struct job *j, const struct diag_result *verdict, struct plan *out)
{
	memset(out, 0, sizeof *out);
	out->first_fix = FIX_NONE;
	out->unmoved = FIX_NONE;    /* unmoved_step 0: not set */
	int kind = j ? (int)j->kind : (verdict ? verdict->model_kind : JOB_KIND_UNKNOWN);
	out->kind = kind;
	bool video = kind == JOB_KIND_VIDEO;
	const enum fix_id *order = video ? video_order : image_order;
	size_t n = video ? sizeof video_order / sizeof *video_order
			 : sizeof image_order / sizeof *image_order;
	bool failed = verdict && verdict->oom && verdict->timing != DIAG_T_NONE;
	out->phase = failed ? verdict->phase : DIAG_P_NONE;
	for (size_t i = 0; i < n; i++) {
		out->steps[i].fix = order[i];
		/* Without a job nothing can be seen to be done. */
		out->steps[i].status = j ? fix_status(j, order[i], NULL, 0) : FIX_TODO;
		out->steps[i].helps = plan_fix_helps(order[i], out->phase, kind);
	}
	out->n = n;

	if (!failed)
		return;
	if (verdict->timing == DIAG_T_ENVIRONMENT) {
		/* Worker state, not settings: no fallback to a YAML change. */
		out->first_fix = FIX_FRESH_WORKER;
		accept(out, FIX_FRESH_WORKER);
		return;
	}

	enum fix_id cand[6];
	size_t nc = phase_fixes(verdict->phase, video, cand);
	enum fix_id want = FIX_NONE;
	if (!nc) {
		/* The log does not show which phase failed: the rollback order decides. */
		want = plan_next_step(out);
	} else {
		/* D: the steps that fit now and then are the largest bucket or the longest clips. */
		if (verdict->timing == DIAG_T_INTERMITTENT) {
			enum fix_id pref = video ? FIX_NUM_FRAMES : FIX_DROP_LARGEST_BUCKET;
			accept(out, pref);
			if (step_status(out, j, pref) == FIX_TODO)
				want = pref;
		}
		for (size_t i = 0; want == FIX_NONE && i < nc; i++)
			if (step_status(out, j, cand[i]) == FIX_TODO)
				want = cand[i];
	}
	switch (verdict->phase) {
	case DIAG_P_BASELINE_SAMPLING:
	case DIAG_P_SAMPLING:
		/* Lighter previews keep them; turning them off is as good a first answer. */
		accept(out, FIX_LIGHTER_SAMPLING);
		accept(out, FIX_DISABLE_SAMPLING);
		break;
	case DIAG_P_TRAINING:
		if (!j && verdict->timing == DIAG_T_FIRST_STEPS) {
			/* Without a job nothing shows which step of the order is in place. */
			accept(out, FIX_GRADIENT_CHECKPOINTING);
			accept(out, FIX_BATCH_SIZE);
			accept(out, FIX_DROP_LARGEST_BUCKET);
			if (video)
				accept(out, FIX_NUM_FRAMES);
		}
		break;
	default:
		break;
	}
	if (want == FIX_NONE) {
		/* Nothing that acts on the failing phase is left to change. */
		out->exhausted = true;
		return;
	}
	out->first_fix = want;
	/* The chosen fix is always acceptable, even when the list of alternatives is full. */
	if (out->naccept == sizeof out->accept / sizeof out->accept[0]) {
		bool in = false;
		for (size_t i = 0; i < out->naccept; i++)
			in |= out->accept[i] == want;
		if (!in)
			out->accept[out->naccept - 1] = want;
	}
	accept(out, want);
}

bool plan_after_unmoved(struct plan *p, const struct job *j, const struct diag_result *v,
			enum fix_id tried, long long before)
{
	if (!p || !v || tried == FIX_NONE || p->first_fix != tried || !v->oom ||
	    v->timing != DIAG_T_INTERMITTENT || before < 1 || v->failed_step < 1 ||
	    v->failed_step > before)
		return false;
	enum fix_id cand[6];
	size_t nc = phase_fixes(v->phase, p->kind == JOB_KIND_VIDEO, cand);
	for (size_t i = 0; i < nc; i++) {
		if (cand[i] == tried || step_status(p, j, cand[i]) != FIX_TODO)
			continue;
		p->first_fix = cand[i];
		p->unmoved = tried;
		p->unmoved_step = v->failed_step;
		accept(p, cand[i]);
		return true;
	}
	return false;
}

/* The sentence of plan_exhausted_text for the phase `ph` (DIAG_P_NONE: the whole plan). */
static void exhausted_words(enum diag_phase ph, const struct job *j, char *buf, size_t sz)
{
	int o = ph == DIAG_P_NONE
		? snprintf(buf, sz, "%s", _("The settings oomfix knows are exhausted: no step of the "
					    "plan is left to change. This job needs a card with more "
					    "memory, or a smaller model."))
		: snprintf(buf, sz, _("The settings oomfix knows are exhausted for this phase (%s): "
				      "none that changes its memory is left to change. This job "
				      "needs a card with more memory, or a smaller model."),
			   diag_phase_label(ph));
	if (o > 0 && (size_t)o < sz && j && j->arch_has_layer_offloading && !j->layer_offloading)
		snprintf(buf + o, sz - (size_t)o, " %s",
			 _("One setting is left to try by hand: model.layer_offloading: true "
			   "(experimental and slow)."));
}

void plan_exhausted_text(const struct plan *p, const struct job *j, char *buf, size_t sz)
{
	if (!buf || !sz)
		return;
	buf[0] = '\0';
	if (!p || !p->exhausted)
		return;
	exhausted_words(p->phase, j, buf, sz);
}

/* ---- one decision ----------------------------------------------------------------------------- */

struct plan_decision plan_decide(const struct plan *p, const struct diag_result *v, bool untried)
{
	struct plan_decision d = { PLAN_NEXT_EXHAUSTED, FIX_NONE, DIAG_U_NONE, false };

	if (untried) {
		d.what = PLAN_NEXT_UNTRIED;
	} else if (v && !v->oom) {
		d.what = PLAN_NEXT_NOT_OOM;
	} else if (v && v->survived) {
		d.what = PLAN_NEXT_SURVIVED;
		d.fix = p->first_fix == FIX_FRESH_WORKER ? FIX_NONE : p->first_fix;
	} else if (v && v->timing == DIAG_T_ENVIRONMENT) {
		d.what = PLAN_NEXT_FRESH_WORKER;
		d.fix = FIX_FRESH_WORKER;
	} else if (v && (v->timing == DIAG_T_NONE || v->timing >= DIAG_T_COUNT)) {
		d.what = PLAN_NEXT_WHEN_UNKNOWN;
		d.why = v->unknown;
	} else {
		/* a verdict picks the fix that acts on its phase; no log: the plan's order */
		enum fix_id f = v ? p->first_fix : plan_next_step(p);
		if (f != FIX_NONE && f != FIX_FRESH_WORKER) {
			d.what = PLAN_NEXT_APPLY;
			d.fix = f;
		}
	}
	return d;
}

enum fix_id plan_decision_first(const struct plan_decision *d)
{
	return d->what == PLAN_NEXT_APPLY || d->what == PLAN_NEXT_FRESH_WORKER ? d->fix : FIX_NONE;
}

const char *plan_decision_word(const struct plan_decision *d)
{
	switch (d->what) {
	case PLAN_NEXT_APPLY:
	case PLAN_NEXT_FRESH_WORKER:
		if (d->fix != FIX_NONE)
			return fix_name(d->fix);
		break;
	case PLAN_NEXT_EXHAUSTED: return _("nothing left");
	case PLAN_NEXT_SURVIVED: return _("survived");
	case PLAN_NEXT_WHEN_UNKNOWN: return _("when unknown");
	case PLAN_NEXT_NOT_OOM: return _("no OOM");
	case PLAN_NEXT_UNTRIED: return _("not run yet");
	default: break;
	}
	return "-";
}

const char *plan_next_name(enum plan_next what)
{
	static const char *const names[PLAN_NEXT_COUNT] = {
		[PLAN_NEXT_APPLY] = "apply", [PLAN_NEXT_FRESH_WORKER] = "fresh_worker",
		[PLAN_NEXT_WHEN_UNKNOWN] = "when_unknown", [PLAN_NEXT_EXHAUSTED] = "exhausted",
		[PLAN_NEXT_NOT_OOM] = "not_oom", [PLAN_NEXT_SURVIVED] = "survived",
		[PLAN_NEXT_UNTRIED] = "untried",
	};
	return (unsigned)what < PLAN_NEXT_COUNT ? names[what] : NULL;
}

void plan_decision_text(const struct plan_decision *d, const struct plan *p, const struct job *j,
			char *buf, size_t sz)
{
	if (!buf || !sz)
		return;
	buf[0] = '\0';
	switch (d->what) {
	case PLAN_NEXT_APPLY:
		if (p && p->unmoved_step > 0 && p->unmoved != d->fix)
			snprintf(buf, sz, _("The last change (%s) did not move the failure: it still "
					    "came at step %lld. Next change, the next in the order: "
					    "%s — %s."),
				 fix_name(p->unmoved), p->unmoved_step, fix_name(d->fix),
				 _(fix_defs[d->fix].title));
		else
			snprintf(buf, sz, _("Next change: %s — %s."), fix_name(d->fix),
				 _(fix_defs[d->fix].title));
		break;
	case PLAN_NEXT_FRESH_WORKER:
		snprintf(buf, sz, "%s",
			 _("Start a fresh worker: the settings are not what is too big, the worker or "
			   "what else holds the card is. Stop retrying the same job; if a known-good job "
			   "fails there too, escalate."));
		break;
	case PLAN_NEXT_WHEN_UNKNOWN:
		if (d->why == DIAG_U_SKIP_OUTCOME) {
			snprintf(buf, sz, "%s",
				 _("The log ends right after the trainer skipped a batch, so it does not "
				   "show whether the run went on: no change is chosen on a guess. Give "
				   "the rest of the log, or run the job again."));
			break;
		}
		snprintf(buf, sz, "%s",
			 _("The log does not show when it ran out of memory, so no change is chosen on "
			   "a guess. Run the job again capturing the trainer's whole output (stdout and "
			   "stderr), or name the change yourself."));
		break;
	case PLAN_NEXT_EXHAUSTED:
		exhausted_words(p ? p->phase : DIAG_P_NONE, j, buf, sz);
		break;
	case PLAN_NEXT_NOT_OOM:
		snprintf(buf, sz, "%s",
			 _("The log shows no GPU out-of-memory, so there is no change to choose."));
		break;
	case PLAN_NEXT_SURVIVED:
		if (d->fix != FIX_NONE)
			snprintf(buf, sz,
				 _("The run survived its out-of-memory errors (the trainer skipped those "
				   "batches and went on), so nothing has to change. To stop the skips, "
				   "name a change yourself; the first would be %s."),
				 fix_name(d->fix));
		else
			snprintf(buf, sz, "%s",
				 _("The run survived its out-of-memory errors (the trainer skipped those "
				   "batches and went on), so nothing has to change."));
		break;
	case PLAN_NEXT_UNTRIED:
		if (d->unsaved)
			snprintf(buf, sz, "%s",
				 _("The last change has not been tried yet, and it is not saved: the "
				   "log cannot show whether it helped. s saves it; then run the job "
				   "again and give its new log."));
		else
			snprintf(buf, sz, "%s",
				 _("The last change has not been tried yet: the log is older than the "
				   "last change saved to the job, so it cannot show whether that change "
				   "helped. Run the job again and give its new log."));
		break;
	default:
		break;
	}
}

void plan_decision_json(struct json *js, const struct plan_decision *d, const struct plan *p,
			const struct job *j)
{
	char words[768];

	plan_decision_text(d, p, j, words, sizeof words);
	json_obj_begin(js);
	json_key(js, "answer");
	json_str(js, plan_next_name(d->what));
	json_key(js, "fix");
	json_str(js, fix_name(d->fix));
	json_key(js, "text");
	json_str(js, words);
	json_obj_end(js);
}

/* ---- checklist -------------------------------------------------------------------------------- */

static const char *const check_labels[CHECK_COUNT] = {
	[CHECK_BATCH] = N_("Batch size lowered"),
	[CHECK_BUCKET] = N_("Largest resolution bucket disabled"),
	[CHECK_SAMPLING] = N_("Sampling lighter or off"),
	[CHECK_GC] = N_("Gradient checkpointing on"),
	[CHECK_FRAMES] = N_("(video) Frames lowered"),
	[CHECK_WORKER] = N_("Conservative and still failing: suspect the worker"),
};

static const char *const check_ids[CHECK_COUNT] = {
	[CHECK_BATCH] = "batch", [CHECK_BUCKET] = "bucket", [CHECK_SAMPLING] = "sampling",
	[CHECK_GC] = "gradient_checkpointing", [CHECK_FRAMES] = "frames", [CHECK_WORKER] = "worker",
};

const char *checklist_label(enum check_item c)
{
	if (c < 0 || c >= CHECK_COUNT)
		return "";
	return _(check_labels[c]);
}

const char *checklist_id(enum check_item c)
{
	if (c < 0 || c >= CHECK_COUNT)
		return "";
	return check_ids[c];
}

static void set(struct checklist *cl, enum check_item c, enum fix_status st, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set(struct checklist *cl, enum check_item c, enum fix_status st, const char *fmt, ...)
{
	cl->item[c] = st;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cl->reason[c], sizeof cl->reason[c], fmt, ap);
	va_end(ap);
}

/* Largest frame count of any clip or the preview (1 for stills). */
static long long max_frames(const struct job *j)
{
	long long m = j->sample_num_frames > 1 ? j->sample_num_frames : 1;
	for (size_t i = 0; i < j->ndatasets; i++)
		if (j->datasets[i].num_frames > m)
			m = j->datasets[i].num_frames;
	return m;
}

void checklist_build(const struct job *j, const struct diag_result *verdict, struct checklist *out)
{
	memset(out, 0, sizeof *out);
	bool failing = verdict && verdict->oom;
	if (!j) {
		for (int c = 0; c < CHECK_COUNT; c++)
			set(out, (enum check_item)c, FIX_TODO, "%s", _("no job loaded"));
		if (verdict && verdict->timing == DIAG_T_ENVIRONMENT)
			set(out, CHECK_WORKER, FIX_TODO, "%s",
			    _("the log points at the worker: start a fresh one"));
		return;
	}
	/* Each item is its fix's status, worded by the fix: the plan shows the same statuses. */
	char r[200];
	enum fix_status st = fix_status(j, FIX_BATCH_SIZE, r, sizeof r);
	set(out, CHECK_BATCH, st == FIX_DONE ? FIX_DONE : FIX_TODO, "%s", r);

	st = fix_status(j, FIX_DROP_LARGEST_BUCKET, r, sizeof r);
	set(out, CHECK_BUCKET, st, "%s", r);

	if (fix_status(j, FIX_DISABLE_SAMPLING, NULL, 0) == FIX_DONE)
		set(out, CHECK_SAMPLING, FIX_DONE, "%s", _("sampling is disabled"));
	else {
		st = fix_status(j, FIX_LIGHTER_SAMPLING, r, sizeof r);
		set(out, CHECK_SAMPLING, st == FIX_DONE ? FIX_DONE : FIX_TODO, "%s", r);
	}

	st = fix_status(j, FIX_GRADIENT_CHECKPOINTING, r, sizeof r);
	set(out, CHECK_GC, st == FIX_DONE ? FIX_DONE : FIX_TODO, "%s", r);

	if (j->kind == JOB_KIND_VIDEO) {
		st = fix_status(j, FIX_NUM_FRAMES, r, sizeof r);
		set(out, CHECK_FRAMES, st, "%s", r);
	} else {
		set(out, CHECK_FRAMES, FIX_NOT_APPLICABLE, "%s", _("image model"));
	}

	/* Only the E verdict blames the worker (SPEC §3.3); an ordinary out-of-memory of a
	 * conservative job is answered by the plan, not by a fresh worker. */
	if (!job_is_conservative(j))
		set(out, CHECK_WORKER, FIX_NOT_APPLICABLE, "%s",
		    _("the job is not conservative yet: keep rolling back settings"));
	else if (failing && verdict->timing == DIAG_T_ENVIRONMENT)
		set(out, CHECK_WORKER, FIX_TODO, "%s",
		    _("conservative and still out of memory: start a fresh worker"));
	else if (failing)
		set(out, CHECK_WORKER, FIX_NOT_APPLICABLE, "%s",
		    _("conservative, but the log shows no worker problem: see the plan"));
	else
		set(out, CHECK_WORKER, FIX_DONE, "%s",
		    _("conservative: if it still fails, suspect the worker, not the settings"));
}

/* ---- scale-up --------------------------------------------------------------------------------- */

static const char *const scaleup_titles[SCALEUP_COUNT] = {
	[SCALEUP_KEEP_MEMORY] = N_("Keep the memory settings"),
	[SCALEUP_STEPS] = N_("Raise the steps"),
	[SCALEUP_BUCKETS] = N_("Re-enable larger buckets, one at a time"),
	[SCALEUP_SAMPLING] = N_("Richer sampling"),
	[SCALEUP_BATCH_OR_CLIP] = N_("Larger batch or longer clips"),
};

const char *scaleup_title(enum scaleup_step s)
{
	if (s < 0 || s >= SCALEUP_COUNT)
		return "";
	return _(scaleup_titles[s]);
}

static const long long rungs[] = { 512, 768, 1024, 1280, 1536 };

static long long rung_up(long long v)
{
	for (size_t i = 0; i < sizeof rungs / sizeof *rungs; i++)
		if (rungs[i] > v)
			return rungs[i];
	return v;
}

/* Writes the sentence for step s, or returns false when the job has nothing to raise there. */
static bool scaleup_text(const struct job *j, enum scaleup_step s, char *t, size_t tsz)
{
	switch (s) {
	case SCALEUP_STEPS:
		if (j && j->steps > 0)
			snprintf(t, tsz, _("Raise train.steps (now %lld) and change nothing else in this "
					   "run."), j->steps);
		else
			snprintf(t, tsz, "%s", _("Raise train.steps and change nothing else in this run."));
		return true;
	case SCALEUP_BUCKETS: {
		long long mb = j ? job_max_bucket(j) : 0;
		if (!j) {
			snprintf(t, tsz, "%s", _("Add back one larger resolution bucket per run."));
			return true;
		}
		if (mb <= 0)
			mb = 512;
		if (mb >= 1024)
			return false;
		snprintf(t, tsz, _("Add the %lld bucket back (largest now %lld); one bucket per run."),
			 rung_up(mb), mb);
		return true;
	}
	case SCALEUP_SAMPLING:
		if (!j) {
			snprintf(t, tsz, "%s", _("Turn sampling back on, or make previews larger."));
			return true;
		}
		if (fix_status(j, FIX_DISABLE_SAMPLING, NULL, 0) == FIX_DONE) {
			snprintf(t, tsz, "%s", _("Turn sampling back on (train.disable_sampling: false) "
						 "with small previews first."));
			return true;
		}
		if (fix_status(j, FIX_LIGHTER_SAMPLING, NULL, 0) != FIX_DONE)
			return false;
		snprintf(t, tsz, _("Make previews a little richer (now %lld×%lld, %lld steps), one "
				   "setting per run."), j->sample_width, j->sample_height, j->sample_steps);
		return true;
	case SCALEUP_BATCH_OR_CLIP:
		if (j && j->kind == JOB_KIND_VIDEO) {
			long long f = max_frames(j);
			int g = fix_frame_grid(j);
			if (f > 1 && g) {
				long long up = ((2 * f - 2) / g) * g + 1;
				snprintf(t, tsz, _("Try longer clips: num_frames %lld → %lld, or a batch "
						   "size of 2."), f, up);
				return true;
			}
		}
		snprintf(t, tsz, "%s", _("Try a batch size of 2 and halve gradient accumulation to keep "
					 "the effective batch."));
		return true;
	default:
		return false;
	}
}

enum scaleup_step scaleup_next(const struct job *j, enum scaleup_step last, char *text,
			       size_t textsz)
{
	char buf[400];
	if (text && textsz)
		text[0] = '\0';
	int s = last < SCALEUP_STEPS ? SCALEUP_STEPS : (int)last + 1;
	for (; s < SCALEUP_COUNT; s++) {
		if (!scaleup_text(j, (enum scaleup_step)s, buf, sizeof buf))
			continue;
		if (text && textsz) {
			if (last == SCALEUP_NONE || last == SCALEUP_KEEP_MEMORY)
				snprintf(text, textsz, "%s %s",
					 _("Keep the memory settings that made the retry work."), buf);
			else
				snprintf(text, textsz, "%s", buf);
		}
		return (enum scaleup_step)s;
	}
	return SCALEUP_NONE;
}

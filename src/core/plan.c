/* plan.c — the guide's rollback order as a plan with done marks, the first fix for a verdict
 * (SPEC §3.4), the quick checklist and the scale-up order after a successful retry (SPEC §4).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "oomfix/i18n.h"
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

void plan_build(const struct job *j, const struct diag_result *verdict, struct plan *out)
{
	memset(out, 0, sizeof *out);
	out->first_fix = FIX_NONE;
	int kind = j ? (int)j->kind : (verdict ? verdict->model_kind : JOB_KIND_UNKNOWN);
	out->kind = kind;
	bool video = kind == JOB_KIND_VIDEO;
	const enum fix_id *order = video ? video_order : image_order;
	size_t n = video ? sizeof video_order / sizeof *video_order
			 : sizeof image_order / sizeof *image_order;
	for (size_t i = 0; i < n; i++) {
		out->steps[i].fix = order[i];
		/* Without a job nothing can be seen to be done. */
		out->steps[i].status = j ? fix_status(j, order[i], NULL, 0) : FIX_TODO;
	}
	out->n = n;

	if (!verdict || !verdict->oom || verdict->timing == DIAG_T_NONE)
		return;

	enum fix_id want = FIX_NONE;
	switch (verdict->timing) {
	case DIAG_T_ENVIRONMENT:
		/* Worker state, not settings: no fallback to a YAML change. */
		out->first_fix = FIX_FRESH_WORKER;
		accept(out, FIX_FRESH_WORKER);
		return;
	case DIAG_T_BEFORE_TRAINING:
		switch (verdict->phase) {
		case DIAG_P_MODEL_LOAD:
			want = FIX_LOW_VRAM;
			accept(out, want);
			break;
		case DIAG_P_CACHING:
			want = video ? FIX_NUM_FRAMES : FIX_DROP_LARGEST_BUCKET;
			accept(out, want);
			break;
		case DIAG_P_BASELINE_SAMPLING:
			/* Lighter previews keep them; turn them off only when they cannot get lighter. */
			want = step_status(out, j, FIX_LIGHTER_SAMPLING) == FIX_TODO ? FIX_LIGHTER_SAMPLING
										: FIX_DISABLE_SAMPLING;
			accept(out, FIX_LIGHTER_SAMPLING);
			accept(out, FIX_DISABLE_SAMPLING);
			break;
		default:
			/* Before training with no recognisable phase: the rollback order decides. */
			break;
		}
		break;
	case DIAG_T_FIRST_STEPS:
		if (!j) {
			want = out->steps[0].fix;
			accept(out, FIX_GRADIENT_CHECKPOINTING);
			accept(out, FIX_BATCH_SIZE);
			accept(out, FIX_DROP_LARGEST_BUCKET);
			if (video)
				accept(out, FIX_NUM_FRAMES);
		}
		break;
	case DIAG_T_SAMPLING:
		want = step_status(out, j, FIX_LIGHTER_SAMPLING) == FIX_DONE ? FIX_DISABLE_SAMPLING
									     : FIX_LIGHTER_SAMPLING;
		accept(out, FIX_LIGHTER_SAMPLING);
		accept(out, FIX_DISABLE_SAMPLING);
		break;
	case DIAG_T_INTERMITTENT:
		want = video ? FIX_NUM_FRAMES : FIX_DROP_LARGEST_BUCKET;
		accept(out, want);
		break;
	default:
		return;
	}

	if (want == FIX_NONE || (j && step_status(out, j, want) != FIX_TODO)) {
		want = j ? plan_next_step(out) : out->steps[0].fix;
		/* Every step of the order is in place and it still fails: the worker is suspect. */
		if (want == FIX_NONE)
			want = FIX_FRESH_WORKER;
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
	char r[200];
	enum fix_status st = fix_status(j, FIX_BATCH_SIZE, r, sizeof r);
	set(out, CHECK_BATCH, st == FIX_DONE ? FIX_DONE : FIX_TODO, "%s", r);

	long long mb = job_max_bucket(j);
	if (mb <= 0)
		mb = 512;
	set(out, CHECK_BUCKET, mb <= 768 ? FIX_DONE : FIX_TODO, _("largest bucket %lld"), mb);

	if (fix_status(j, FIX_DISABLE_SAMPLING, NULL, 0) == FIX_DONE)
		set(out, CHECK_SAMPLING, FIX_DONE, "%s", _("sampling is disabled"));
	else {
		st = fix_status(j, FIX_LIGHTER_SAMPLING, r, sizeof r);
		set(out, CHECK_SAMPLING, st == FIX_DONE ? FIX_DONE : FIX_TODO, "%s", r);
	}

	st = fix_status(j, FIX_GRADIENT_CHECKPOINTING, r, sizeof r);
	set(out, CHECK_GC, st == FIX_DONE ? FIX_DONE : FIX_TODO, "%s", r);

	if (j->kind == JOB_KIND_VIDEO) {
		long long f = max_frames(j);
		set(out, CHECK_FRAMES, f <= 33 ? FIX_DONE : FIX_TODO,
		    _("longest clip or preview: %lld frames"), f);
	} else {
		set(out, CHECK_FRAMES, FIX_NOT_APPLICABLE, "%s", _("image model"));
	}

	if (!job_is_conservative(j))
		set(out, CHECK_WORKER, FIX_NOT_APPLICABLE, "%s",
		    _("the job is not conservative yet: keep rolling back settings"));
	else if (failing)
		set(out, CHECK_WORKER, FIX_TODO, "%s",
		    _("conservative and still out of memory: start a fresh worker"));
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

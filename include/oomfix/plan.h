/* plan.h — the fix table, checklist, rollback plan, first fix and scale-up order.
 *
 * Each fix is data (id, title, why) plus a pure function from a job to doc edits (SPEC §4).
 * Switches (gradient_checkpointing, disable_sampling, low_vram) and clamps (batch_size,
 * lighter_sampling) are idempotent; steps (drop_largest_bucket, num_frames) go one rung down per
 * application until their floor, where they report FIX_DONE and produce no edit.
 */
#ifndef OOMFIX_PLAN_H
#define OOMFIX_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "oomfix/diag.h"
#include "oomfix/doc.h"
#include "oomfix/job.h"

enum fix_id {
	FIX_GRADIENT_CHECKPOINTING, FIX_BATCH_SIZE, FIX_DROP_LARGEST_BUCKET, FIX_LIGHTER_SAMPLING,
	FIX_DISABLE_SAMPLING, FIX_NUM_FRAMES, FIX_LOW_VRAM, FIX_FRESH_WORKER, FIX_COUNT,
	FIX_NONE = -1
};

enum fix_status { FIX_NOT_APPLICABLE, FIX_TODO, FIX_DONE };

struct fix_def {
	enum fix_id id;
	const char *name;  /* "gradient_checkpointing" */
	const char *title; /* short, N_() — translate with _() where displayed */
	const char *why;   /* one paragraph, N_(): what memory it saves, what it costs */
	const char *change; /* one sentence, N_(): what it changes in the file (the walk-through) */
	const char *lesson; /* N_(): the longer lesson behind it (the walk-through's "more";
			    * oomfix retry teaches each try with it) */
};

extern const struct fix_def fix_defs[FIX_COUNT];

enum fix_id fix_by_name(const char *name); /* FIX_NONE when unknown */
const char *fix_name(enum fix_id id);      /* "batch_size"; NULL for FIX_NONE (static string) */
const char *fix_status_name(enum fix_status s); /* "not_applicable", "todo", "done" (static) */

/* Status of a fix on the job; `reason` (may be NULL) receives a translated sentence saying why
 * it is not applicable, done, or what it would change. j may be NULL (→ FIX_NOT_APPLICABLE). */
enum fix_status fix_status(const struct job *j, enum fix_id id, char *reason, size_t reasonsz);

/* The edits that apply the fix once (one rung for steps). Everything in the list is owned by it
 * (free with fix_edits_free); n = 0 when there is nothing to change (fix done, or fresh_worker,
 * which is advice only). `note` holds a translated remark for the user, or "" (e.g. "the
 * accumulation uses the largest per-dataset batch", "layer offloading is also available").
 * Returns ERR_OK, or ERR_DATA when the fix is not applicable to this job (e says why). */
struct fix_edit_list {
	struct doc_edit *edits;
	size_t n;
	char **strings; size_t nstrings; /* storage for paths/values */
	char note[512];
};
int fix_edits(const struct job *j, enum fix_id id, bool keep_effective_batch,
	      struct fix_edit_list *out, struct err *e);
/* The same for a run that failed in `phase` (enum diag_phase, 0 = not known): num_frames then
 * leaves the previews' frames alone when the training step (or caching) failed. */
int fix_edits_after(const struct job *j, enum fix_id id, bool keep_effective_batch, int phase,
		    struct fix_edit_list *out, struct err *e);
void fix_edits_free(struct fix_edit_list *l);

/* The frame grid step of the job's video model: 8 for LTX-2 (8k+1 frames), 4 for Wan/MiniMax
 * (4k+1), 0 for image models. */
int fix_frame_grid(const struct job *j);

/* The rollback plan for the job's kind (image or video order), with done marks, and the first
 * fix for a verdict (SPEC §3.4).
 *
 * A fix must act on the phase that failed: each step is marked `helps` when it changes the
 * memory of the verdict's phase (model load: low_vram; caching: num_frames for video,
 * drop_largest_bucket, low_vram; baseline or periodic sampling: lighter_sampling,
 * disable_sampling, low_vram; training and saving: the rollback order without the sampling
 * steps). Without a verdict, without an OOM, or when the log does not show the phase, every step
 * helps. The first fix is the first step that helps and is not done, in that order (D prefers
 * num_frames for video, drop_largest_bucket otherwise; baseline and periodic sampling start with
 * lighter_sampling); E (environment) is always fresh_worker. When no step that helps is left the
 * first fix is FIX_NONE and `exhausted` is set: the settings oomfix knows cannot shrink that
 * phase any further (plan_exhausted_text says so). Without a job the kind comes from
 * verdict->model_kind (image order when unknown) and every step is FIX_TODO, because nothing can
 * be seen to be done. A step's status is fix_status() — the checklist reads the same statuses,
 * so the two can never disagree. */
struct plan_step {
	enum fix_id fix;
	enum fix_status status;
	bool helps;                 /* changes the memory of the phase that failed */
};
struct plan {
	struct plan_step steps[8];
	size_t n;
	int kind;                   /* enum job_kind the order was chosen for */
	enum diag_phase phase;      /* the failing phase the marks follow (DIAG_P_NONE: all help) */
	enum fix_id first_fix;      /* for the verdict (FIX_NONE when no verdict, no OOM, or
				     * nothing that helps is left) */
	bool exhausted;             /* an OOM, not E, and no step that helps is left to do */
	enum fix_id accept[4];      /* every fix §3.4 also allows first (first_fix included) */
	size_t naccept;
	enum fix_id unmoved;        /* plan_after_unmoved: the fix tried last that did not move the
				     * failing step, when unmoved_step > 0 */
	long long unmoved_step;     /* that step (0: not set) */
};
/* job may be NULL (kind unknown); verdict may be NULL (no log). */
void plan_build(const struct job *j, const struct diag_result *verdict, struct plan *out);

/* True when fix `id` changes the memory of the failing phase `phase` for a model of `kind`
 * (DIAG_P_NONE: true for every fix but fresh_worker). */
bool plan_fix_helps(enum fix_id id, enum diag_phase phase, int kind);

/* After a run that followed a change of `tried` and still ran out of memory now and then (D), no
 * later in training than the run before it (which failed at step `before`): the same change again
 * is not the best next guess, since the steps it shrank were not the ones that failed. When
 * p->first_fix is `tried` and another fix that acts on the failing phase is left in the order, it
 * becomes the first fix (batch size 1 before a second bucket drop), p->unmoved says why (the
 * decision's words name it) and true is returned. Otherwise p is unchanged and false. */
bool plan_after_unmoved(struct plan *p, const struct job *j, const struct diag_result *verdict,
			enum fix_id tried, long long before);

/* When p->exhausted: a translated sentence saying that the settings oomfix knows are exhausted
 * for the failing phase, and what is left (a bigger card or a smaller model; layer offloading by
 * hand where the arch has it and it is off). j may be NULL. Writes "" otherwise. */
void plan_exhausted_text(const struct plan *p, const struct job *j, char *buf, size_t sz);

/* The translated mark of a step that does not act on the failing phase. */
const char *plan_no_help_label(void);

/* The first plan step not done (FIX_NONE when every step is done or not applicable): what
 * `oomfix fix JOB next` applies without a log. */
enum fix_id plan_next_step(const struct plan *p);

/* ---- one decision, every front end (SPEC §3.4) -------------------------------------------------
 *
 * What comes next after a run is one function of the verdict, the job (through its plan) and its
 * journal, with one answer from a closed set. Every front end — `oomfix fix … next`, `oomfix plan`,
 * `oomfix diagnose`, `oomfix retry`, the UI's `a`, the plan view, the walk-through — asks
 * plan_decide and shows plan_decision_text: none of them decides alone, so none can apply a fix
 * on a guess where another refuses.
 *
 * How to call it:
 *
 *	struct plan p;
 *	plan_build(job, verdict, &p);                // job and verdict may be NULL
 *	bool untried = source_log_untried(src, log, NULL); // or the UI's "changed since the log"
 *	struct plan_decision d = plan_decide(&p, verdict, untried);
 *	char words[768];
 *	plan_decision_text(&d, &p, job, words, sizeof words);
 *	switch (d.what) { case PLAN_NEXT_APPLY: apply d.fix; ...; default: show words, change nothing }
 *
 * The answers, tried in this order (the first that holds wins):
 *   PLAN_NEXT_UNTRIED       `untried`: the last saved change is newer than the log, which cannot
 *                           show whether it helped — run the job again first (one change, then a
 *                           run). fix = FIX_NONE.
 *   PLAN_NEXT_NOT_OOM       the log shows no GPU out-of-memory (also a cuDNN/cuBLAS suspicion
 *                           without an OOM). fix = FIX_NONE.
 *   PLAN_NEXT_SURVIVED      the run survived its OOMs (SPEC §3.3's three conditions): nothing must
 *                           change. fix = the change that would stop the skips (a suggestion the
 *                           user may name explicitly), or FIX_NONE.
 *   PLAN_NEXT_FRESH_WORKER  the verdict is E: the card or the worker, not the settings.
 *                           fix = FIX_FRESH_WORKER (advice, no YAML edit).
 *   PLAN_NEXT_WHEN_UNKNOWN  an OOM whose log does not show when (timing null): no fix on a guess.
 *                           fix = FIX_NONE.
 *   PLAN_NEXT_APPLY         apply fix `fix` (never FIX_NONE or FIX_FRESH_WORKER). Without a
 *                           verdict (no log) it is the first plan step not yet done.
 *   PLAN_NEXT_EXHAUSTED     nothing that acts on the failing phase is left to change (or, without
 *                           a log, every plan step is done). fix = FIX_NONE.
 *
 * Only PLAN_NEXT_APPLY changes the job. A command line that refuses exits 65 (data) for
 * NOT_OOM, SURVIVED, WHEN_UNKNOWN and EXHAUSTED, 69 where it stops a retry loop (FRESH_WORKER,
 * EXHAUSTED, WHEN_UNKNOWN), and 75 for UNTRIED. */
enum plan_next {
	PLAN_NEXT_APPLY,
	PLAN_NEXT_FRESH_WORKER,
	PLAN_NEXT_WHEN_UNKNOWN,
	PLAN_NEXT_EXHAUSTED,
	PLAN_NEXT_NOT_OOM,
	PLAN_NEXT_SURVIVED,
	PLAN_NEXT_UNTRIED,
	PLAN_NEXT_COUNT
};
struct plan_decision {
	enum plan_next what;
	enum fix_id fix;            /* see the list above */
	enum diag_unknown why;      /* PLAN_NEXT_WHEN_UNKNOWN: why the verdict's timing is null
				     * (the words differ when a skip banner ends the log) */
	bool unsaved;               /* PLAN_NEXT_UNTRIED: the change is not saved yet (the UI sets
				     * it; the answer is the same, the words say what to do) */
};

/* p from plan_build(job, verdict, p) — the same verdict; verdict NULL = no log. */
struct plan_decision plan_decide(const struct plan *p, const struct diag_result *verdict,
				 bool untried);

/* The decision in words, translated, the same in every front end: for APPLY "Next change:
 * batch_size — Batch size 1 …", otherwise why nothing is applied and what to do instead. j may be
 * NULL. Always writes a sentence. */
void plan_decision_text(const struct plan_decision *d, const struct plan *p, const struct job *j,
			char *buf, size_t sz);

/* The fix the decision makes first, for a job list or a JSON field: d->fix for APPLY and
 * FRESH_WORKER, FIX_NONE for every other answer (a survived run's suggestion, a change not yet
 * run, a timing not known: nothing is the first change). */
enum fix_id plan_decision_first(const struct plan_decision *d);

/* A column's word for the first change of a decision: the fix's id for APPLY and FRESH_WORKER,
 * else a short translated word ("nothing left" for EXHAUSTED, "survived", "when unknown",
 * "no OOM", "not run yet"), so that a job list never shows a bare "-" (E16). Static. */
const char *plan_decision_word(const struct plan_decision *d);

/* A stable id for JSON ("apply", "fresh_worker", "when_unknown", "exhausted", "not_oom",
 * "survived", "untried"), static. */
const char *plan_next_name(enum plan_next what);

/* Writes the decision as a JSON object value: {"answer": plan_next_name, "fix": id or null,
 * "text": plan_decision_text}. */
struct json;
void plan_decision_json(struct json *js, const struct plan_decision *d, const struct plan *p,
			const struct job *j);

/* The six checklist items as ticks on the loaded job: the plan's table seen as ticks (SPEC §4), so
 * each item has exactly the status of its fix — CHECK_BATCH of batch_size, CHECK_BUCKET of
 * drop_largest_bucket (ticked when no bucket is above 512), CHECK_GC of gradient_checkpointing,
 * CHECK_FRAMES of num_frames (FIX_NOT_APPLICABLE for image models), CHECK_SAMPLING done when
 * lighter_sampling or disable_sampling is. A checklist and a plan of the same job can therefore
 * never contradict each other.
 * CHECK_WORKER: FIX_NOT_APPLICABLE while the job is not conservative yet, FIX_TODO when it is and
 * the verdict still shows an OOM (start a fresh worker), FIX_DONE when it is and no failure is
 * known. `reason[i]` holds a translated sentence for each item. */
enum check_item { CHECK_BATCH, CHECK_BUCKET, CHECK_SAMPLING, CHECK_GC, CHECK_FRAMES, CHECK_WORKER,
		  CHECK_COUNT };
struct checklist {
	enum fix_status item[CHECK_COUNT];
	char reason[CHECK_COUNT][200];
};
void checklist_build(const struct job *j, const struct diag_result *verdict, struct checklist *out);
const char *checklist_label(enum check_item c); /* translated label (static/gettext storage) */
const char *checklist_id(enum check_item c);    /* stable id for JSON: "batch", "bucket", ... */

/* The checklist items in the order of the rollback plan `p` (the first item is the one its first
 * step ticks), the items no step shows after them and the worker last, so the checklist and the
 * plan read in the same order (checklist_view.c). p may be NULL (the items' own order). */
void checklist_order(const struct plan *p, enum check_item out[CHECK_COUNT]);

/* Marks the items whose status in `now` (the job with unsaved edits) differs from `saved` (the
 * job as saved): " (unsaved)" after the reason of an item ticked only by an unsaved edit. */
void checklist_mark_unsaved(struct checklist *now, const struct checklist *saved);

/* After a successful retry: scale up one setting at a time, in this order (SPEC §4). */
enum scaleup_step {
	SCALEUP_KEEP_MEMORY,   /* keep the memory settings that made the retry work */
	SCALEUP_STEPS,         /* raise train.steps */
	SCALEUP_BUCKETS,       /* re-enable larger buckets, one at a time */
	SCALEUP_SAMPLING,      /* richer sampling */
	SCALEUP_BATCH_OR_CLIP, /* then a larger batch or longer clips */
	SCALEUP_COUNT,
	SCALEUP_NONE = -1
};
const char *scaleup_title(enum scaleup_step s); /* translated title (gettext storage) */

/* The next scale-up step after `last` that has something to change on this job, with a
 * translated sentence for it in `text`. Pass SCALEUP_NONE right after the first successful
 * retry: SCALEUP_KEEP_MEMORY is a rule rather than a change, so the answer is then SCALEUP_STEPS
 * and the text also says to keep the memory settings. Steps with nothing to raise on this job are
 * skipped (buckets when the largest is already 1024 or more, sampling when it is on and not
 * lightened). Returns SCALEUP_NONE when nothing is left. j may be NULL (generic text). */
enum scaleup_step scaleup_next(const struct job *j, enum scaleup_step last, char *text,
			       size_t textsz);

#endif

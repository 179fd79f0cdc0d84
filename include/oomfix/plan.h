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
	const char *lesson; /* N_(): the longer lesson behind it (the walk-through's "more") */
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
void fix_edits_free(struct fix_edit_list *l);

/* The frame grid step of the job's video model: 8 for LTX-2 (8k+1 frames), 4 for Wan/MiniMax
 * (4k+1), 0 for image models. */
int fix_frame_grid(const struct job *j);

/* The rollback plan for the job's kind (image or video order), with done marks.
 *
 * Without a job the kind comes from verdict->model_kind; when that is unknown too the image order
 * is used (num_frames cannot be judged) and every step is marked FIX_TODO, because nothing can be
 * seen to be done. first_fix follows SPEC §3.4; when the chosen fix is done or not applicable it
 * falls to the first plan step not done, and to fresh_worker when every step is done (a
 * conservative job that still fails). Without a job, B (first_steps) gives the first step of the
 * order and accepts every step B can blame (gradient checkpointing, batch, bucket, frames). */
struct plan_step { enum fix_id fix; enum fix_status status; };
struct plan {
	struct plan_step steps[8];
	size_t n;
	int kind;                   /* enum job_kind the order was chosen for */
	enum fix_id first_fix;      /* for the verdict (FIX_NONE when no verdict or no OOM) */
	enum fix_id accept[4];      /* every fix §3.4 also allows first (first_fix included) */
	size_t naccept;
};
/* job may be NULL (kind unknown); verdict may be NULL (no log). */
void plan_build(const struct job *j, const struct diag_result *verdict, struct plan *out);

/* The first plan step not done (FIX_NONE when every step is done or not applicable): what
 * `oomfix fix JOB next` applies without a log. */
enum fix_id plan_next_step(const struct plan *p);

/* The six checklist items as ticks on the loaded job. CHECK_BUCKET is ticked when the largest
 * bucket is 768 or less and CHECK_FRAMES when no clip or preview has more than 33 frames (the
 * conservative limits of SPEC §3.3 E); CHECK_FRAMES is FIX_NOT_APPLICABLE for image models.
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

/* plan.h — the fix table, checklist, rollback plan, first fix and scale-up order.
 *
 * Each fix is data (id, title, why) plus a pure function from a job to doc edits (SPEC §4).
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
	const char *title; /* short, translatable */
	const char *why;   /* one paragraph: what memory it saves, what it costs */
};

extern const struct fix_def fix_defs[FIX_COUNT];

enum fix_id fix_by_name(const char *name); /* FIX_NONE when unknown */

/* Status of a fix on the job; `reason` (may be NULL) receives why it is not applicable or done. */
enum fix_status fix_status(const struct job *j, enum fix_id id, char *reason, size_t reasonsz);

/* The edits that apply the fix once (one rung for steps). *edits is malloc'd (free with
 * fix_edits_free); *n = 0 when there is nothing to change. ERR_DATA when not applicable. */
struct fix_edit_list {
	struct doc_edit *edits;
	size_t n;
	char **strings; size_t nstrings; /* storage for paths/values */
};
int fix_edits(const struct job *j, enum fix_id id, bool keep_effective_batch,
	      struct fix_edit_list *out, struct err *e);
void fix_edits_free(struct fix_edit_list *l);

/* The rollback plan for the job's kind (image or video order), with done marks. */
struct plan_step { enum fix_id fix; enum fix_status status; };
struct plan {
	struct plan_step steps[8];
	size_t n;
	enum fix_id first_fix;      /* for the verdict (FIX_NONE when no OOM) */
	enum fix_id accept[4];      /* every fix §3.4 also allows first */
	size_t naccept;
};
/* job may be NULL (kind unknown); verdict may be NULL (no log). */
void plan_build(const struct job *j, const struct diag_result *verdict, struct plan *out);

/* The six checklist items as ticks on the loaded job. */
enum check_item { CHECK_BATCH, CHECK_BUCKET, CHECK_SAMPLING, CHECK_GC, CHECK_FRAMES, CHECK_WORKER,
		  CHECK_COUNT };
struct checklist { enum fix_status item[CHECK_COUNT]; };
void checklist_build(const struct job *j, const struct diag_result *verdict, struct checklist *out);
const char *checklist_label(enum check_item c);

#endif

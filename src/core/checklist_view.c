/* checklist_view.c — the quick checklist as shown beside the rollback plan: in the plan's order,
 * and with the items an unsaved edit ticked marked as such (plan.h). */
#include <stdio.h>
#include <string.h>

#include "oomfix/i18n.h"
#include "oomfix/plan.h"

/* The checklist item that shows fix `f` as a tick, or CHECK_COUNT when none does. */
static enum check_item item_of(enum fix_id f)
{
	switch (f) {
	case FIX_GRADIENT_CHECKPOINTING: return CHECK_GC;
	case FIX_BATCH_SIZE: return CHECK_BATCH;
	case FIX_DROP_LARGEST_BUCKET: return CHECK_BUCKET;
	case FIX_LIGHTER_SAMPLING:
	case FIX_DISABLE_SAMPLING: return CHECK_SAMPLING;
	case FIX_NUM_FRAMES: return CHECK_FRAMES;
	default: return CHECK_COUNT;
	}
}

void checklist_order(const struct plan *p, enum check_item out[CHECK_COUNT])
{
	bool seen[CHECK_COUNT] = { false };
	size_t n = 0;
	for (size_t i = 0; p && i < p->n; i++) {
		enum check_item c = item_of(p->steps[i].fix);
		if (c < CHECK_COUNT && !seen[c]) {
			seen[c] = true;
			out[n++] = c;
		}
	}
	/* Items no step of this plan shows (frames on an image model), then the worker, last as in
	 * the guide: it is what is left when everything else is done. */
	for (int c = 0; c < CHECK_COUNT; c++)
		if (!seen[c] && c != CHECK_WORKER)
			out[n++] = (enum check_item)c;
	if (!seen[CHECK_WORKER])
		out[n++] = CHECK_WORKER;
}

void checklist_mark_unsaved(struct checklist *now, const struct checklist *saved)
{
	for (int c = 0; c < CHECK_COUNT; c++) {
		if (now->item[c] == saved->item[c])
			continue;
		size_t len = strlen(now->reason[c]);
		snprintf(now->reason[c] + len, sizeof now->reason[c] - len, " %s",
			 now->item[c] == FIX_DONE ? _("(unsaved)") : _("(unsaved: the saved job has it)"));
	}
}

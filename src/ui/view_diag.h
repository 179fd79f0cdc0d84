/* view_diag.h — what the Log view and the field panels draw of the diagnosis and the estimate:
 * the diagnosis panel (view_diag.c), the memory bar (membar.c), the fit line (fitline.c). */
#ifndef OOMFIX_UI_VIEW_DIAG_H
#define OOMFIX_UI_VIEW_DIAG_H

#include <stdbool.h>
#include <stdint.h>
#include <curses.h>

#include "oomfix/diag.h"
#include "draw.h"
#include "lines.h"
#include "session.h"

/* Builds the diagnosis panel's lines (view_diag.c; the Log view draws them). */
struct ui_diag_layout {
	bool stacked;       /* drawn below the log (few rows) rather than beside it */
	/* How much the panel is squeezed so the marked timing row fits a short pane, a step at a
	 * time: 0 not at all; 1 the table shows only its header and the marked row; 2 the
	 * out-of-date sentence takes its short form too; 3 the table's header goes as well. */
	int compact;
	long long mark_end; /* set: the line after the marked timing row, -1 when none */
};
void ui_diag_lines(const struct ui_session *s, struct ui_diag_layout *lay, struct ui_lines *l,
		   int width);
/* The memory account of the OOM message as a stacked bar with its legend (membar.c); adds
 * nothing when the message gave no numbers. */
void ui_membar_lines(struct ui_lines *l, const struct diag_result *d, int width);

/* The fit line (fitline.c, SPEC §12). ui_fit_start: the card from --vram (bytes; 0: ask
 * nvidia-smi once in a worker thread). ui_fit_draw draws the estimate of the job being edited at
 * the bottom of r and returns the rows it took (0 when r is too low to give any). tick/busy:
 * nvidia-smi's answer arrived (redraw) / is awaited. ui_fit_change_lines: the estimate before →
 * after the unsaved change. */
void ui_fit_start(int64_t vram_bytes);
int ui_fit_draw(const struct ui_session *s, WINDOW *win, struct ui_rect r);
struct ui_env;
bool ui_fit_tick(const struct ui_env *v);
bool ui_fit_busy(const struct ui_env *v);
void ui_fit_change_lines(const struct ui_session *s, struct ui_lines *l, int width);
struct estimate;
/* The Plan's line under a rollback step (review 4: the Plan teaches the order with it): the
 * estimate after that step and the ones before it: the phase the step acts on, then the peak
 * and the verdict on the fit line's card, wrapped under the step at `indent`. */
void ui_fit_step_lines(const struct ui_session *s, enum fix_id fix, const struct estimate *after,
		       struct ui_lines *l, int width, int indent);

#endif

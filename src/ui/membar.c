/* membar.c — the memory account of the OOM message (SPEC §3.6) as one stacked bar under the
 * verdict: this job, other processes, unaccounted, free, each with its own fill character so
 * the bar reads without colour, and a legend with the figures. */
#include <langinfo.h>
#include <string.h>

#include "oomfix/diag.h"
#include "oomfix/i18n.h"
#include "oomfix/memacct.h"
#include "oomfix/text.h"
#include "view_diag.h"
#include "view.h"

/* Shades in a UTF-8 locale, distinct ASCII otherwise: the fill is the meaning, colour only
 * helps. */
static const struct {
	const char *utf8, *ascii;
	enum ui_role role;
} fills[MEMACCT_NPARTS] = {
	[MEMACCT_JOB] = { "\xe2\x96\x88", "#", UI_R_VALUE },          /* █ */
	[MEMACCT_OTHERS] = { "\xe2\x96\x93", "=", UI_R_OOM },          /* ▓ */
	/* ▒; not "?", which the ASCII screen uses for a character it cannot show */
	[MEMACCT_UNACCOUNTED] = { "\xe2\x96\x92", "%", UI_R_ERROR },
	[MEMACCT_FREE] = { "\xe2\x96\x91", ".", UI_R_DIM },            /* ░ */
};

static bool utf8_locale(void)
{
	const char *cs = nl_langinfo(CODESET);
	return cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
}

/* Cells for each part: cumulative rounding, so the cells add up to the bar exactly and a
 * part's share is off by less than one cell. */
static void allot(const int64_t part[MEMACCT_NPARTS], int64_t capacity, int cells,
		  int out[MEMACCT_NPARTS])
{
	int64_t cum = 0;
	int prev = 0;

	for (int i = 0; i < MEMACCT_NPARTS; i++) {
		int end;
		cum += part[i];
		end = (int)((cum * cells * 2 / capacity + 1) / 2);
		if (end > cells)
			end = cells;
		out[i] = end - prev;
		prev = end;
	}
}

static struct ui_line *legend_item(struct ui_lines *l, struct ui_line *ln, int *used, int width,
				   int k, int64_t bytes, bool utf8)
{
	char item[128], size[32];
	int w;

	memacct_format(bytes, size, sizeof size);
	snprintf(item, sizeof item, " %s %s  ", diag_memory_part_label(k), size);
	w = 1 + text_width(item, strlen(item));
	/* an item is two role changes (its fill, its words); a line holds UI_LINE_SEGS */
	if (ln && (*used + w - 2 > width || ln->nseg + 2 > UI_LINE_SEGS))
		ln = NULL;
	if (!ln) {
		ln = ui_lines_add(l, UI_R_NORMAL, " ");
		*used = 1;
	}
	ui_line_append(ln, fills[k].role, utf8 ? fills[k].utf8 : fills[k].ascii);
	ui_line_append(ln, UI_R_NORMAL, item);
	*used += w;
	return ln;
}

void ui_membar_lines(struct ui_lines *l, const struct diag_result *d, int width)
{
	const struct memacct *m = &d->memory;
	int64_t part[MEMACCT_NPARTS], said[MEMACCT_NPARTS];
	int cells, n[MEMACCT_NPARTS], used = 0;
	bool utf8 = utf8_locale();
	char buf[512], cap[32];
	struct ui_line *ln = NULL;

	if (!m->present || !memacct_parts(m, part))
		return;
	cells = width - 3; /* a blank, then the bar between brackets */
	if (cells > 72)
		cells = 72;
	if (cells < 10)
		return;
	allot(part, m->capacity, cells, n);
	{
		int any = 0;
		for (int k = 0; k < MEMACCT_NPARTS; k++)
			any += n[k] > 0 ? n[k] : 0;
		if (!any)
			return; /* a message cut short: only the card's size, nothing to draw */
	}
	memacct_format(m->capacity, cap, sizeof cap);
	snprintf(buf, sizeof buf, _("GPU memory when it failed (%s card):"), cap);
	ui_lines_wrap(l, UI_R_LABEL, buf, width, 1);

	ln = ui_lines_add(l, UI_R_NORMAL, " [");
	for (int k = 0; k < MEMACCT_NPARTS; k++) {
		char run[72 * 3 + 1];
		size_t w = 0;
		const char *f = utf8 ? fills[k].utf8 : fills[k].ascii;
		size_t fl = strlen(f);
		if (n[k] <= 0)
			continue;
		for (int c = 0; c < n[k] && w + fl < sizeof run; c++, w += fl)
			memcpy(run + w, f, fl);
		run[w] = '\0';
		ui_line_append(ln, fills[k].role, run);
	}
	{
		int drawn = 0;
		for (int k = 0; k < MEMACCT_NPARTS; k++)
			drawn += n[k] > 0 ? n[k] : 0;
		/* what the message did not account for stays blank */
		snprintf(buf, sizeof buf, "%*s]", cells - drawn, "");
		ui_line_append(ln, UI_R_NORMAL, buf);
	}
	ln = NULL;
	said[MEMACCT_JOB] = m->job;
	said[MEMACCT_OTHERS] = m->others_total;
	said[MEMACCT_UNACCOUNTED] = m->unaccounted;
	said[MEMACCT_FREE] = m->free;
	for (int k = 0; k < MEMACCT_NPARTS; k++) {
		if (k == MEMACCT_JOB && m->job < 0)
			continue;
		if (k == MEMACCT_UNACCOUNTED && m->unaccounted < 0)
			continue;
		if (k == MEMACCT_FREE && m->free < 0)
			continue;
		/* the message's own figures: the bar is clipped to the card, the legend is not */
		ln = legend_item(l, ln, &used, width, k, said[k], utf8);
	}
	diag_memory_advice(d, buf, sizeof buf);
	if (buf[0])
		ui_lines_wrap(l, UI_R_EVIDENCE, buf, width, 1);
}

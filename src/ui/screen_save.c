/* screen_save.c — the save screen: what will be written (the diff) and where the previous
 * version and the journal go, behind the save question. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/i18n.h"
#include "screens.h"
#include "view_diag.h"

void ui_save_draw(struct ui_app *a, const struct ui_ctx *c)
{
	struct ui_lines l = { 0 };
	char *d = ui_session_diff(&a->s, 3);
	char buf[1200];

	/* Where the save goes, and the previous version and the journal by their real names: a web
	 * UI job is written into its database row, its backup and journal sit beside its log. */
	char *where = source_where(a->s.src), *bak = source_backup_name(a->s.src);
	char *jour = source_journal_name(a->s.src);
	snprintf(buf, sizeof buf, _("Save %s: these changes will be written"),
		 where ? where : a->s.job_path);
	ui_lines_add(&l, UI_R_HEADING, buf);
	if (source_row(a->s.src))
		snprintf(buf, sizeof buf, _("The previous version is kept as %s, and the change is "
					    "noted in %s."), bak ? bak : "?", jour ? jour : "?");
	else {
		const char *base = strrchr(a->s.job_path, '/');
		base = base ? base + 1 : a->s.job_path;
		snprintf(buf, sizeof buf,
			 _("The previous version is kept as %s~, and the change is noted in "
			   "%s.oomfix.md beside it."), base, base);
	}
	free(where);
	free(bak);
	free(jour);
	ui_lines_wrap(&l, UI_R_DIM, buf, c->r.w - 2, 1);
	ui_fit_change_lines(&a->s, &l, c->r.w - 2);
	ui_lines_add(&l, UI_R_NORMAL, "");
	ui_lines_diff(&l, d ? d : "");
	free(d);
	ui_draw_scrolled(c, &l, &a->save_pos);
	ui_lines_free(&l);
}

/* view_fields.c — the Training, Datasets, Sample and Model panels, built from job_fields[]:
 * label, effective value, where it comes from when the key is absent ("(default)", "(from
 * Training)", ...), a mark when it differs from the loaded file. Enter edits a number or text in place; Space toggles a switch or a bucket. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/i18n.h"
#include "oomfix/text.h"
#include "prompt.h"
#include "view.h"
#include "view_diag.h"

/* The web editor's resolution toggles (aitk-reference §c.3). */
static const int buckets[] = { 256, 512, 768, 1024, 1280, 1328, 1536, 2048 };
#define NBUCKETS (sizeof buckets / sizeof buckets[0])

#define MAX_ROWS 512

/* One row of a field panel. */
struct ui_frow {
	const struct job_field *f;  /* NULL for a heading or a bucket row */
	size_t ds;
	int bucket;                 /* resolution bucket value for a bucket toggle, 0 otherwise */
	bool heading;
	const char *text;           /* heading text (translated) */
};

/* The view that shows each panel (its tab names the panel). */
static const struct ui_view_ops *const panel_view[JOB_PANEL_COUNT] = {
	[JOB_PANEL_TRAINING] = &ui_view_training, [JOB_PANEL_DATASETS] = &ui_view_datasets,
	[JOB_PANEL_SAMPLE] = &ui_view_sample, [JOB_PANEL_MODEL] = &ui_view_model,
};

/* Their tabs. */
static const enum ui_view panel_tab[JOB_PANEL_COUNT] = {
	[JOB_PANEL_TRAINING] = UI_V_TRAINING, [JOB_PANEL_DATASETS] = UI_V_DATASETS,
	[JOB_PANEL_SAMPLE] = UI_V_SAMPLE, [JOB_PANEL_MODEL] = UI_V_MODEL,
};

static enum job_panel panel_of(enum ui_view v)
{
	for (int p = 0; p < JOB_PANEL_COUNT; p++)
		if (v == panel_tab[p])
			return (enum job_panel)p;
	return JOB_PANEL_TRAINING;
}

static bool is_per_dataset(const struct job_field *f)
{
	return !strncmp(f->path, "datasets[]", 10);
}

static bool ds_has_bucket(const struct job_dataset *d, long long b)
{
	for (size_t i = 0; i < d->nres; i++)
		if (d->res[i] == b)
			return true;
	return false;
}

/* The rows of the panel that view v shows. */
static size_t fields_rows(const struct ui_env *v, struct ui_frow *rows, size_t max)
{
	const struct job *j = v->s->job;
	enum job_panel p = panel_of(v->view);
	size_t n = 0;

#define ADD(...) do { if (n < max) rows[n++] = (struct ui_frow){ __VA_ARGS__ }; } while (0)
	if (!j)
		return 0;
	if (p != JOB_PANEL_DATASETS) {
		for (size_t i = 0; i < job_nfields; i++) {
			const struct job_field *f = &job_fields[i];
			if (f->panel == p && job_field_applies(j, f))
				ADD(.f = f);
		}
		if (p == JOB_PANEL_SAMPLE)
			ADD(.heading = false, .text = job_prompts_label);
		return n;
	}
	for (size_t ds = 0; ds < j->ndatasets; ds++) {
		ADD(.heading = true, .ds = ds);
		for (size_t i = 0; i < job_nfields; i++) {
			const struct job_field *f = &job_fields[i];
			if (f->panel != p || !job_field_applies(j, f))
				continue;
			if (f->type != JOB_F_RESLIST) {
				ADD(.f = f, .ds = ds);
				continue;
			}
			ADD(.f = f, .ds = ds, .heading = true);
			for (size_t b = 0; b < NBUCKETS; b++)
				ADD(.f = f, .ds = ds, .bucket = buckets[b]);
		}
	}
#undef ADD
	return n;
}

static bool row_selectable(const struct ui_frow *r)
{
	return r->f && !r->heading;
}

/* Pads `s` with spaces to `cells` cells (measured, so a Japanese label lines up too). */
static void padded(char *buf, size_t sz, const char *s, int cells)
{
	int w = text_width(s, strlen(s));
	snprintf(buf, sz, "%s%*s", s, w < cells ? cells - w : 0, "");
}

/* When a key is absent, says where the value shown comes from instead of a bare "(default)",
 * which would be wrong for a value inherited from another field or derived from other keys:
 * a dataset's batch size is the Training one, quantize_te follows Quantize, an arch comes from
 * legacy is_* flags, Cache Latents also reads cache_latents. Into buf, with its leading space. */
static void default_note(const struct job *j, const struct job_field *f, size_t ds, char *buf,
			 size_t sz)
{
	if (f->fallback_path) {
		const struct job_field *fb = job_field_find(f->fallback_path);
		if (fb && fb->panel != f->panel)
			/* The panel's name is its tab's. */
			snprintf(buf, sz, _(" (from %s)"), _(panel_view[fb->panel]->name));
		else if (fb)
			snprintf(buf, sz, _(" (follows %s)"), _(fb->label));
		else
			snprintf(buf, sz, "%s", _(" (default)"));
		return;
	}
	if (!strcmp(f->path, "model.arch") && !j->arch_written) {
		/* The trainer picks the arch from the first is_* flag that is true. Which flags exist
		 * and in what order is the model's knowledge; here only the flags written in the file
		 * are looked at, to name the one that applies when it is the only one. */
		const struct doc_node *m = j->process ? doc_deref(j->process) : NULL;
		const char *flag = NULL;
		int nflags = 0;
		for (size_t i = 0; m && m->kind == DOC_MAP && i < m->n; i++) {
			if (strcmp(m->keys[i]->value, "model") != 0)
				continue;
			const struct doc_node *mm = doc_deref(m->items[i]);
			for (size_t k = 0; mm && mm->kind == DOC_MAP && k < mm->n; k++) {
				bool on = false;
				if (strncmp(mm->keys[k]->value, "is_", 3) != 0)
					continue;
				if (doc_as_bool(mm->items[k], &on) && on) {
					flag = mm->keys[k]->value;
					nflags++;
				}
			}
		}
		if (nflags == 1)
			snprintf(buf, sz, _(" (from %s)"), flag);
		else if (nflags > 1)
			snprintf(buf, sz, "%s", _(" (from the is_* flags)"));
		else
			snprintf(buf, sz, "%s", _(" (default)"));
		return;
	}
	if (!strcmp(f->path, "datasets[].cache_latents_to_disk") && ds < j->ndatasets &&
	    j->datasets[ds].cache_latents_ram) {
		snprintf(buf, sz, "%s", _(" (default; cache_latents keeps latents in memory)"));
		return;
	}
	snprintf(buf, sz, "%s", _(" (default)"));
}

/* A dataset's heading: its number and folder. */
static void dataset_heading(const struct job *j, const struct ui_frow *r, struct ui_lines *l)
{
	const struct job_dataset *d = &j->datasets[r->ds];
	char buf[64];
	snprintf(buf, sizeof buf, _("Dataset %zu"), r->ds + 1);
	struct ui_line *ln = ui_lines_add(l, UI_R_HEADING, buf);
	if (d->folder) {
		ui_line_append(ln, UI_R_DIM, "  ");
		ui_line_append(ln, UI_R_VALUE, d->folder);
	}
	ln->gutter = ' ';
}

/* The read-only prompt count of the Sample panel. */
static void prompt_count_line(const struct job *j, const struct ui_frow *r, int labw,
			      struct ui_lines *l)
{
	char buf[32], pad[256];
	bool legacy = false;
	padded(pad, sizeof pad, _(r->text), labw);
	struct ui_line *ln = ui_lines_addf(l, UI_R_LABEL, "  %s  ", pad);
	snprintf(buf, sizeof buf, "%zu", job_prompt_count(j, &legacy));
	ui_line_append(ln, UI_R_VALUE, buf);
	ui_line_append(ln, UI_R_DIM, legacy ? _("  (sample.prompts, read-only)") : _("  (read-only)"));
	ln->gutter = ' ';
}

/* The Resolutions label above the bucket toggles: the default when the key is absent, and the
 * sizes kept that are none of the toggles. */
static void resolutions_line(const struct job *j, const struct ui_frow *r, int labw,
			     struct ui_lines *l)
{
	const struct job_dataset *d = &j->datasets[r->ds];
	char other[256] = "", buf[320], pad[256];
	size_t w = 0;
	padded(pad, sizeof pad, _(r->f->label), labw);
	struct ui_line *ln = ui_lines_addf(l, UI_R_LABEL, "  %s  ", pad);
	for (size_t k = 0; k < d->nres; k++) {
		bool known = false;
		for (size_t b = 0; b < NBUCKETS; b++)
			known |= d->res[k] == buckets[b];
		if (!known && w < sizeof other - 24)
			w += (size_t)snprintf(other + w, sizeof other - w, "%s%lld", w ? ", " : "",
					      d->res[k]);
	}
	if (!d->has_resolution)
		ui_line_append(ln, UI_R_DEFAULT, _("512 (default)"));
	if (other[0]) {
		snprintf(buf, sizeof buf, _("also kept: %s"), other);
		ui_line_append(ln, UI_R_VALUE, buf);
	}
	ln->gutter = ' ';
}

/* One bucket toggle, marked when it differs from the loaded file. */
static void bucket_line(const struct job *j, const struct job *bj, const struct ui_frow *r,
			int labw, struct ui_lines *l)
{
	char buf[64];
	bool on = ds_has_bucket(&j->datasets[r->ds], r->bucket);
	bool was = bj && r->ds < bj->ndatasets && ds_has_bucket(&bj->datasets[r->ds], r->bucket);
	snprintf(buf, sizeof buf, "%*s[%c] %d", labw + 4, "", on ? 'x' : ' ', r->bucket);
	struct ui_line *ln = ui_lines_add(l, on ? UI_R_VALUE : UI_R_LABEL, buf);
	ln->gutter = on != was ? '*' : ' ';
	ln->gutter_role = UI_R_CHANGED;
	if (on != was)
		ui_line_append(ln, UI_R_CHANGED, _("  (changed)"));
	ln->selectable = true;
}

/* An ordinary field: its value, where it comes from when the key is absent, and what it was in
 * the loaded file when it changed. */
static void field_line(const struct job *j, const struct job *bj, const struct ui_frow *r,
		       int labw, struct ui_lines *l)
{
	char val[256] = "", old[256] = "", buf[600], pad[256];
	bool isdef = false, oldef = false;
	bool has = job_field_value(j, r->f, r->ds, val, sizeof val, &isdef);
	bool ohas = bj && (!is_per_dataset(r->f) || r->ds < bj->ndatasets) &&
		    job_field_value(bj, r->f, r->ds, old, sizeof old, &oldef);
	bool changed = has != ohas || strcmp(val, old) != 0 || isdef != oldef;

	padded(pad, sizeof pad, _(r->f->label), labw);
	struct ui_line *ln = ui_lines_addf(l, UI_R_LABEL, "  %s  ", pad);
	if (r->f->type == JOB_F_BOOL && has)
		snprintf(buf, sizeof buf, "[%c] %s", !strcmp(val, "true") ? 'x' : ' ', val);
	else
		snprintf(buf, sizeof buf, "%s", has ? val : "-");
	ui_line_append(ln, isdef ? UI_R_DEFAULT : UI_R_VALUE, buf);
	if (isdef) {
		char note[128];
		default_note(j, r->f, r->ds, note, sizeof note);
		ui_line_append(ln, UI_R_DEFAULT, note);
	}
	if (changed) {
		/* An absent key with a fallback was inherited, not a default (a dataset's batch size
		 * is the Training one). */
		snprintf(buf, sizeof buf, _("  (was %s%s)"), ohas ? old : "-",
			 !oldef ? "" : r->f->fallback_path ? _(", inherited") : _(", default"));
		ui_line_append(ln, UI_R_CHANGED, buf);
	}
	ln->gutter = changed ? '*' : ' ';
	ln->gutter_role = UI_R_CHANGED;
	ln->selectable = true;
}

static void build_lines(const struct ui_env *v, const struct ui_frow *rows, size_t n,
			struct ui_lines *l, int *value_col)
{
	const struct job *j = v->s->job, *bj = v->s->base_job;
	int labw = 0;

	for (size_t i = 0; i < n; i++) {
		const char *lab = rows[i].f ? _(rows[i].f->label) : rows[i].text ? _(rows[i].text) : "";
		if (!rows[i].heading && !rows[i].bucket) {
			int w = text_width(lab, strlen(lab));
			if (w > labw)
				labw = w;
		}
	}
	if (labw > 34)
		labw = 34;
	*value_col = 1 + 2 + labw + 2;
	for (size_t i = 0; i < n; i++) {
		const struct ui_frow *r = &rows[i];
		if (r->heading && !r->f)
			dataset_heading(j, r, l);
		else if (!r->f)
			prompt_count_line(j, r, labw, l);
		else if (r->heading)
			resolutions_line(j, r, labw, l);
		else if (r->bucket)
			bucket_line(j, bj, r, labw, l);
		else
			field_line(j, bj, r, labw, l);
	}
}

/* Keeps the cursor on a row that can be edited, searching in direction dir first. */
static void settle(struct ui_pos *p, const struct ui_frow *rows, size_t n, int dir)
{
	if (n == 0) {
		p->cursor = 0;
		return;
	}
	if (p->cursor >= (long long)n)
		p->cursor = (long long)n - 1;
	if (p->cursor < 0)
		p->cursor = 0;
	for (long long c = p->cursor; c >= 0 && c < (long long)n; c += dir)
		if (row_selectable(&rows[c])) {
			p->cursor = c;
			return;
		}
	for (long long c = p->cursor; c >= 0 && c < (long long)n; c -= dir)
		if (row_selectable(&rows[c])) {
			p->cursor = c;
			return;
		}
}

static void fields_draw(const struct ui_env *v)
{
	const struct ui_ctx *c = v->c;
	struct ui_rect r = c->r;
	static struct ui_frow rows[MAX_ROWS];
	struct ui_lines l = { 0 };
	struct ui_pos *p = v->pos;
	int value_col = 0;
	char buf[512];
	size_t n;

	if (!v->s->job && v->s->job_bad) {
		char why[1800];
		ui_job_error_text(v->s, why, sizeof why);
		ui_lines_wrap(&l, UI_R_ERROR, why, r.w - 4, 0);
		for (size_t i = 0; i < l.n && (int)i + 1 < r.h; i++)
			ui_draw_line(c->win, r.y + 1 + (int)i, r.x + 2, r.w - 4, &l.v[i], false);
		ui_lines_free(&l);
		return;
	}
	if (!v->s->job) {
		ui_put(c->win, r.y + 1, r.x + 2, r.w - 4, UI_R_DIM,
		       ui_no_job_text(v, N_("No job file is open. Start oomfix with JOB.yaml to see "
					    "its settings.")));
		return;
	}
	n = fields_rows(v, rows, MAX_ROWS);
	settle(p, rows, n, 1);

	/* A title row: which file, which model, what kind. */
	snprintf(buf, sizeof buf, "%s  %s  %s",
		 v->s->src ? source_label(v->s->src) : _("settings from the log (read-only)"),
		 v->s->job->arch[0] ? v->s->job->arch : "?",
		 job_kind_name(v->s->job->kind) ? _(job_kind_name(v->s->job->kind)) : "");
	ui_put(c->win, r.y, r.x + 1, r.w - 1, UI_R_DIM, buf);
	r.y++;
	r.h--;

	/* Under the panels, the estimate of the job as it is now (SPEC §12). */
	r.h -= ui_fit_draw(v->s, c->win, r);

	/* From 120 columns, the last row tells about the selected field, as menuconfig's help:
	 * its YAML path, what it does to memory, the trainer's default and what it accepts. */
	if (c->cols >= 120 && r.h > 6 && n > 0 && p->cursor < (long long)n && rows[p->cursor].f) {
		const struct ui_frow *fr = &rows[p->cursor];
		char path[256], rule[320];
		job_field_path(v->s->job, fr->f, fr->ds, path, sizeof path);
		job_field_rule(v->s->job, fr->f, rule, sizeof rule);
		snprintf(buf, sizeof buf, _("%s: %s Default: %s. Accepts %s"), path,
			 job_field_memory(fr->f), fr->f->def ? fr->f->def : _("none"), rule);
		struct ui_lines hl = { 0 };
		ui_lines_wrap(&hl, UI_R_DIM, buf, r.w - 2, 1);
		int nh = hl.n < 3 ? (int)hl.n : 3;
		r.h -= nh;
		for (int k = 0; k < nh; k++)
			ui_draw_line(c->win, r.y + r.h + k, r.x, r.w, &hl.v[k], false);
		ui_lines_free(&hl);
	}
	build_lines(v, rows, n, &l, &value_col);
	if (n == 0)
		ui_put(c->win, r.y + 1, r.x + 2, r.w - 4, UI_R_DIM, _("Nothing to show for this model."));
	ui_draw_lines(c->win, r, &l, p->cursor, &p->top, v->mode != UI_M_PROMPT);

	if (v->mode == UI_M_PROMPT && v->prompt->kind == UI_P_FIELD) {
		/* Editing in place: the value column of the cursor row becomes the input. */
		int y = r.y + (int)(p->cursor - p->top), x = r.x + value_col;
		int w = r.w - value_col - 1;
		/* The label part keeps its place: the gutter cell, then the text up to the value
		 * column (the line's text starts after the gutter). */
		if (p->cursor < (long long)l.n) {
			char g[2] = { l.v[p->cursor].gutter ? l.v[p->cursor].gutter : ' ', '\0' };
			ui_fill(c->win, y, r.x, value_col, UI_R_CURSOR);
			ui_put(c->win, y, r.x, 1, UI_R_CURSOR, g);
			ui_put(c->win, y, r.x + 1, value_col - 1, UI_R_CURSOR, l.v[p->cursor].text);
		}
		ui_fill(c->win, y, x, w, UI_R_DIALOG);
		int used = ui_put_input(c->win, y, x, w, UI_R_DIALOG, v->prompt->buf, v->prompt->len,
					v->prompt->cur);
		wmove(c->win, y, x + used);
	}
	ui_lines_free(&l);
}

/* Quotes text as a YAML double-quoted scalar. */
static void yaml_quote(const char *s, char *out, size_t outsz)
{
	size_t w = 0;

	out[w++] = '"';
	for (; *s && w + 8 < outsz; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			out[w++] = '\\';
			out[w++] = (char)c;
		} else if (c < 0x20) {
			w += (size_t)snprintf(out + w, outsz - w, "\\x%02X", c);
		} else {
			out[w++] = (char)c;
		}
	}
	out[w++] = '"';
	out[w] = '\0';
}

/* Applies one edit; says whether it changed anything. Returns true when the edit was made (or
 * there was nothing to change), false when it was refused (the status says why). */
static bool apply_edit(const struct ui_env *v, struct doc_edit *ed,
		       const char *what)
{
	const struct ui_ctx *c = v->c;
	struct err e;
	bool changed;

	if (ui_session_edit(v->s, ed, 1, &changed, &e)) {
		ui_status_err(c, &e);
		return false;
	}
	if (changed)
		ui_status(c, false, _("%s changed (u to undo, d for the diff)"), what);
	else
		ui_status(c, false, _("%s: nothing changed, the file already says so."), what);
	return true;
}

static void toggle_bucket(const struct ui_env *v, const struct ui_frow *r)
{
	const struct ui_ctx *c = v->c;
	const struct job_dataset *d = &v->s->job->datasets[r->ds];
	char path[256], val[512];
	const struct doc_node *node;
	struct doc_edit ed = { 0 };
	size_t w = 0;

	job_field_path(v->s->job, r->f, r->ds, path, sizeof path);
	node = doc_deref(doc_get(ui_session_cur(v->s), path));
	ed.path = path;
	if (ds_has_bucket(d, r->bucket)) {
		if (d->nres <= 1) {
			ui_status(c, true, "%s", _("A dataset needs at least one resolution."));
			return;
		}
		if (node && node->kind == DOC_SEQ) {
			for (size_t i = 0; i < node->n; i++) {
				long long b;
				if (doc_as_long(node->items[i], &b) && b == r->bucket) {
					ed.op = DOC_EDIT_REMOVE_ITEM;
					ed.index = i;
					apply_edit(v, &ed, _("Resolutions"));
					return;
				}
			}
		}
		ui_status(c, true, "%s", _("This resolution list cannot be changed here; use e in Advanced."));
		return;
	}
	/* Turning a bucket on appends it, as the web editor does (list order = click order), in
	 * the list's own style. A single value becomes a list. */
	if (node && node->kind == DOC_SEQ) {
		snprintf(val, sizeof val, "%d", r->bucket);
		ed.op = DOC_EDIT_APPEND_ITEM;
		ed.value = val;
		apply_edit(v, &ed, _("Resolutions"));
		return;
	}
	w += (size_t)snprintf(val + w, sizeof val - w, "[");
	if (node && node->kind == DOC_SCALAR) {
		w += (size_t)snprintf(val + w, sizeof val - w, "%s, ", node->value);
	} else {
		for (size_t i = 0; i < d->nres; i++)
			w += (size_t)snprintf(val + w, sizeof val - w, "%lld, ", d->res[i]);
	}
	snprintf(val + w, sizeof val - w, "%d]", r->bucket);
	ed.op = DOC_EDIT_SET;
	ed.value = val;
	apply_edit(v, &ed, _("Resolutions"));
}

static void toggle_bool(const struct ui_env *v, const struct ui_frow *r)
{
	char path[256], val[64];
	bool isdef;
	struct doc_edit ed = { DOC_EDIT_SET, path, NULL, 0 };

	if (!job_field_value(v->s->job, r->f, r->ds, val, sizeof val, &isdef))
		snprintf(val, sizeof val, "false");
	job_field_path(v->s->job, r->f, r->ds, path, sizeof path);
	ed.value = !strcmp(val, "true") ? "false" : "true";
	/* Back to what the loaded file had: when the key was absent there and the new value is
	 * the default it showed, remove the key again, so toggling twice leaves no change. */
	char old[64];
	bool oldef = false;
	const struct job *bj = v->s->base_job;
	if (bj && (strncmp(r->f->path, "datasets[]", 10) != 0 || r->ds < bj->ndatasets) &&
	    job_field_value(bj, r->f, r->ds, old, sizeof old, &oldef) && oldef &&
	    !strcmp(old, ed.value)) {
		ed.op = DOC_EDIT_REMOVE_KEY;
		ed.value = NULL;
	}
	apply_edit(v, &ed, _(r->f->label));
}

static void start_edit(const struct ui_env *v, const struct ui_frow *r)
{
	const struct ui_ctx *c = v->c;
	char val[256] = "";
	bool isdef;

	if (!job_field_value(v->s->job, r->f, r->ds, val, sizeof val, &isdef))
		val[0] = '\0';
	ui_prompt_open(v->host, UI_P_FIELD, _(r->f->label), val, r->f, r->ds);
	ui_status(c, false, "%s", r->f->type == JOB_F_STR
					  ? _("Type the text; Enter sets it (s saves the file), Esc cancels.")
					  : _("Type a number; empty removes the key (back to the default)."));
}

static void fields_prompt_done(const struct ui_env *v)
{
	const struct ui_ctx *c = v->c;
	const struct job_field *f = v->prompt->field;
	char path[256], val[600], text[512];
	struct doc_edit ed = { DOC_EDIT_SET, path, val, 0 };
	size_t len = v->prompt->len;

	/* Surrounding spaces are never meant in a number, and rarely in a name. */
	const char *s = v->prompt->buf;
	while (*s == ' ')
		s++, len--;
	while (len > 0 && s[len - 1] == ' ')
		len--;
	snprintf(text, sizeof text, "%.*s", (int)len, s);

	if (!v->s->job || !f)
		return;
	job_field_path(v->s->job, f, v->prompt->ds, path, sizeof path);
	/* The trainer's rules for the field: a refused value stays in the editor to be corrected. */
	struct err e;
	if (job_field_check(v->s->job, f, text, &e)) {
		ui_status(c, true, "%s", e.msg);
		ui_prompt_keep(v->host);
		return;
	}
	if (!text[0]) {
		ed.op = DOC_EDIT_REMOVE_KEY;
		ed.value = NULL;
	} else if (f->type == JOB_F_INT || f->type == JOB_F_FLOAT) {
		snprintf(val, sizeof val, "%s", text);
	} else {
		yaml_quote(text, val, sizeof val);
	}
	if (!apply_edit(v, &ed, _(f->label)))
		ui_prompt_keep(v->host);
}

static enum ui_req fields_action(const struct ui_env *v, enum ui_act act)
{
	const struct ui_ctx *c = v->c;
	static struct ui_frow rows[MAX_ROWS];
	struct ui_pos *p = v->pos;
	size_t n;

	if (!v->s->job)
		return UI_REQ_PASS;
	n = fields_rows(v, rows, MAX_ROWS);
	switch (act) {
	case UI_A_UP: case UI_A_DOWN: case UI_A_PGUP: case UI_A_PGDN: case UI_A_TOP:
	case UI_A_BOTTOM:
		ui_pos_move(p, act, (long long)n, c->page);
		settle(p, rows, n, act == UI_A_UP || act == UI_A_PGUP || act == UI_A_BOTTOM ? -1 : 1);
		return UI_REQ_DONE;
	case UI_A_EDIT:
	case UI_A_TOGGLE: {
		if (v->s->read_only) {
			ui_status(c, true, "%s", _("the settings come from the log and are read-only: "
						   "open the job file to change them (oomfix JOB.yaml "
						   "LOG)"));
			return UI_REQ_DONE;
		}
		settle(p, rows, n, 1);
		if (n == 0 || !row_selectable(&rows[p->cursor]))
			return UI_REQ_DONE;
		const struct ui_frow *r = &rows[p->cursor];
		if (r->bucket)
			toggle_bucket(v, r);
		else if (r->f->type == JOB_F_BOOL)
			toggle_bool(v, r);
		else if (act == UI_A_EDIT)
			start_edit(v, r);
		else
			ui_status(c, false, "%s", _("Space toggles switches; press Enter to edit this value."));
		return UI_REQ_DONE;
	}
	default:
		return UI_REQ_PASS;
	}
}

#define FIELD_VIEW(label) { .name = label, .keys = UI_CTX_FIELDS, .draw = fields_draw, \
			    .action = fields_action, .prompt_done = fields_prompt_done, \
			    .tick = ui_fit_tick, .busy = ui_fit_busy }
const struct ui_view_ops ui_view_training = FIELD_VIEW(N_("Training"));
const struct ui_view_ops ui_view_datasets = FIELD_VIEW(N_("Datasets"));
const struct ui_view_ops ui_view_sample = FIELD_VIEW(N_("Sample"));
const struct ui_view_ops ui_view_model = FIELD_VIEW(N_("Model"));

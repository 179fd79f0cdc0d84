/* lines.c — lists of display lines: sanitised text with role segments, built per frame by the
 * text views (plan, diff, YAML, help, walk-through) and drawn by draw.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/buf.h"
#include "oomfix/text.h"
#include "lines.h"

void ui_lines_clear(struct ui_lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].text);
	l->n = 0;
}

void ui_lines_free(struct ui_lines *l)
{
	ui_lines_clear(l);
	free(l->v);
	l->v = NULL;
	l->cap = 0;
}

static bool ascii_mode;

void ui_set_ascii(bool on)
{
	ascii_mode = on;
}

bool ui_ascii(void)
{
	return ascii_mode;
}

size_t ui_for_terminal(char *s, size_t len)
{
	if (!ascii_mode)
		return len;
	len = text_ascii(s, len);
	s[len] = '\0';
	return len;
}

/* Sanitised copy: anything shown may come from a file, and nothing from a file may reach the
 * terminal as a control sequence. Without UTF-8 it is made ASCII here, so that wrapping and
 * clipping measure what is drawn. */
static char *sanitized(const char *s, size_t len, size_t *outlen)
{
	size_t cap = len * 4 + 1;
	char *out = malloc(cap);

	if (!out) {
		*outlen = 0;
		return NULL;
	}
	*outlen = ui_for_terminal(out, text_sanitize(s, len, out, cap));
	return out;
}

struct ui_line *ui_lines_add(struct ui_lines *l, enum ui_role role, const char *text)
{
	static struct ui_line dummy;

	if (!ARRAY_GROW(l->v, l->n + 1, l->cap)) {
		memset(&dummy, 0, sizeof dummy);
		return &dummy;
	}
	struct ui_line *ln = &l->v[l->n];
	memset(ln, 0, sizeof *ln);
	ln->text = sanitized(text ? text : "", text ? strlen(text) : 0, &ln->len);
	if (!ln->text)
		return &dummy;
	l->n++;
	ln->seg[0].off = 0;
	ln->seg[0].role = role;
	ln->nseg = 1;
	ln->gutter = 0; /* no gutter column unless a view asks for one */
	ln->gutter_role = role;
	ln->target = -1;
	return ln;
}

struct ui_line *ui_lines_addf(struct ui_lines *l, enum ui_role role, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return ui_lines_add(l, role, buf);
}

void ui_line_seg(struct ui_line *ln, size_t off, enum ui_role role)
{
	if (ln->nseg > 0 && ln->seg[ln->nseg - 1].off == off) {
		ln->seg[ln->nseg - 1].role = role;
		return;
	}
	if (ln->nseg >= UI_LINE_SEGS || off > ln->len)
		return;
	ln->seg[ln->nseg].off = off;
	ln->seg[ln->nseg].role = role;
	ln->nseg++;
}

void ui_line_append(struct ui_line *ln, enum ui_role role, const char *text)
{
	size_t add;
	char *s;

	if (!ln->text || !text)
		return;
	s = sanitized(text, strlen(text), &add);
	if (!s)
		return;
	char *nt = realloc(ln->text, ln->len + add + 1);
	if (!nt) {
		free(s);
		return;
	}
	memcpy(nt + ln->len, s, add + 1);
	free(s);
	ln->text = nt;
	size_t off = ln->len;
	ln->len += add;
	if (ln->nseg < UI_LINE_SEGS)
		ui_line_seg(ln, off, role);
}

/* Wraps one paragraph (no newlines) at spaces; a word wider than the line, or text without
 * spaces (Japanese), is cut where the cells run out. */
static void wrap_para(struct ui_lines *l, enum ui_role role, const char *p, size_t len, int width,
		      int indent)
{
	int avail = width - indent;
	char pad[64];

	if (avail < 8)
		avail = 8;
	snprintf(pad, sizeof pad, "%*s", indent < 60 ? indent : 60, "");
	if (len == 0) {
		ui_lines_add(l, role, "");
		return;
	}
	while (len > 0) {
		size_t next, cut = text_wrap_next(p, len, avail, &next);
		char *chunk = malloc(strlen(pad) + cut + 1);
		if (!chunk)
			return;
		snprintf(chunk, strlen(pad) + cut + 1, "%s%.*s", pad, (int)cut, p);
		ui_lines_add(l, role, chunk);
		free(chunk);
		p += next;
		len -= next;
	}
}

void ui_lines_wrap(struct ui_lines *l, enum ui_role role, const char *text, int width, int indent)
{
	const char *p = text;

	for (;;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		wrap_para(l, role, p, len, width, indent);
		if (!nl)
			break;
		p = nl + 1;
	}
}

void ui_lines_diff(struct ui_lines *l, const char *diff)
{
	const char *p = diff;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *s = malloc(len + 1);
		enum ui_role role = UI_R_NORMAL;

		if (!s)
			return;
		memcpy(s, p, len);
		s[len] = '\0';
		if (!strncmp(s, "+++", 3) || !strncmp(s, "---", 3))
			role = UI_R_DIFF_HEAD;
		else if (!strncmp(s, "@@", 2))
			role = UI_R_DIFF_HUNK;
		else if (s[0] == '+')
			role = UI_R_DIFF_ADD;
		else if (s[0] == '-')
			role = UI_R_DIFF_DEL;
		else if (s[0] == '\\')
			role = UI_R_DIM;
		ui_lines_add(l, role, s);
		free(s);
		p = nl ? nl + 1 : NULL;
	}
}

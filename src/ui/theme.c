/* theme.c — colour roles and theme files (themes/NAME.yaml).
 *
 * A theme maps each role to {fg, bg, attrs} for colour terminals and to a `mono` set of
 * attributes for terminals without colour (or NO_COLOR / --no-color). Meaning never rests on a
 * colour alone: every role that matters also has a marker character where it is drawn, and a
 * mono form. Colour is decided once at start-up; switching themes only re-installs the pairs.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "config.h"
#include "oomfix/i18n.h"
#include "ui.h"

#define ROLE_NAME(id, name) name,
static const char *const role_names[UI_R_COUNT] = { UI_ROLES(ROLE_NAME) };
#undef ROLE_NAME

/* The compiled-in default, identical to themes/default-dark.yaml (a test checks it). */
static const struct { enum ui_role r; short fg, bg; attr_t attrs, mono; } dark[] = {
	{ UI_R_NORMAL, -1, -1, A_NORMAL, A_NORMAL },
	{ UI_R_TABBAR, COLOR_WHITE, COLOR_BLUE, A_NORMAL, A_REVERSE },
	{ UI_R_TAB_ACTIVE, COLOR_BLACK, COLOR_YELLOW, A_BOLD, A_BOLD },
	{ UI_R_STATUS, COLOR_CYAN, -1, A_NORMAL, A_NORMAL },
	{ UI_R_ERROR, COLOR_RED, -1, A_BOLD, A_BOLD | A_UNDERLINE },
	{ UI_R_FOOTER, -1, -1, A_NORMAL, A_NORMAL },
	{ UI_R_FOOTER_KEY, COLOR_YELLOW, -1, A_BOLD, A_BOLD },
	{ UI_R_CURSOR, COLOR_BLACK, COLOR_CYAN, A_NORMAL, A_REVERSE },
	{ UI_R_HEADING, COLOR_CYAN, -1, A_BOLD, A_BOLD | A_UNDERLINE },
	{ UI_R_LABEL, -1, -1, A_NORMAL, A_NORMAL },
	{ UI_R_VALUE, COLOR_WHITE, -1, A_BOLD, A_BOLD },
	{ UI_R_DEFAULT, 8, -1, A_NORMAL, A_DIM },
	{ UI_R_CHANGED, COLOR_YELLOW, -1, A_BOLD, A_BOLD | A_UNDERLINE },
	{ UI_R_DIM, 8, -1, A_NORMAL, A_DIM },
	{ UI_R_OOM, COLOR_RED, -1, A_BOLD, A_BOLD | A_UNDERLINE },
	{ UI_R_EVIDENCE, COLOR_MAGENTA, -1, A_BOLD, A_BOLD },
	{ UI_R_MATCH, COLOR_BLACK, COLOR_YELLOW, A_NORMAL, A_STANDOUT },
	{ UI_R_DIFF_ADD, COLOR_GREEN, -1, A_NORMAL, A_BOLD },
	{ UI_R_DIFF_DEL, COLOR_RED, -1, A_NORMAL, A_DIM },
	{ UI_R_DIFF_HUNK, COLOR_CYAN, -1, A_NORMAL, A_UNDERLINE },
	{ UI_R_DIFF_HEAD, -1, -1, A_BOLD, A_BOLD },
	{ UI_R_YAML_KEY, COLOR_CYAN, -1, A_NORMAL, A_BOLD },
	{ UI_R_YAML_VALUE, -1, -1, A_NORMAL, A_NORMAL },
	{ UI_R_YAML_COMMENT, 8, -1, A_NORMAL, A_DIM },
	{ UI_R_EDITED, COLOR_YELLOW, -1, A_BOLD, A_BOLD },
	{ UI_R_DONE, COLOR_GREEN, -1, A_BOLD, A_BOLD },
	{ UI_R_TODO, COLOR_YELLOW, -1, A_NORMAL, A_NORMAL },
	{ UI_R_NA, 8, -1, A_NORMAL, A_DIM },
	{ UI_R_MARK, COLOR_YELLOW, -1, A_BOLD, A_BOLD },
	{ UI_R_DIALOG, COLOR_BLACK, COLOR_YELLOW, A_BOLD, A_REVERSE | A_BOLD },
};

void ui_theme_default(struct ui_theme *t)
{
	memset(t, 0, sizeof *t);
	snprintf(t->name, sizeof t->name, "default-dark");
	for (int i = 0; i < UI_R_COUNT; i++)
		t->role[i] = (struct ui_style){ -1, -1, A_NORMAL, A_NORMAL };
	for (size_t i = 0; i < sizeof dark / sizeof dark[0]; i++)
		t->role[dark[i].r] = (struct ui_style){ dark[i].fg, dark[i].bg, dark[i].attrs,
							dark[i].mono };
}

/* ---- parsing -------------------------------------------------------------------------------- */

static const struct { const char *name; short n; } color_names[] = {
	{ "default", -1 }, { "black", 0 }, { "red", 1 }, { "green", 2 }, { "yellow", 3 },
	{ "blue", 4 }, { "magenta", 5 }, { "cyan", 6 }, { "white", 7 }, { "grey", 8 },
	{ "gray", 8 }, { "bright-black", 8 }, { "bright-red", 9 }, { "bright-green", 10 },
	{ "bright-yellow", 11 }, { "bright-blue", 12 }, { "bright-magenta", 13 },
	{ "bright-cyan", 14 }, { "bright-white", 15 },
};

static const struct { const char *name; attr_t a; } attr_names[] = {
	{ "normal", A_NORMAL }, { "bold", A_BOLD }, { "dim", A_DIM }, { "underline", A_UNDERLINE },
	{ "reverse", A_REVERSE }, { "standout", A_STANDOUT }, { "italic", A_ITALIC },
	{ "blink", A_BLINK },
};

struct tparser {
	yaml_parser_t p;
	yaml_event_t ev;
	const char *path;
	struct err *e;
	bool have;
};

static int tp_fail(struct tparser *tp, const yaml_mark_t *m, const char *msg, const char *what)
{
	/* libyaml marks are 0-based; errors are 1-based. */
	return err_set(tp->e, ERR_DATA, tp->path, (int)m->line + 1, (int)m->column + 1, "%s%s%s%s",
		       msg, what ? " '" : "", what ? what : "", what ? "'" : "");
}

static int tp_next(struct tparser *tp)
{
	if (tp->have)
		yaml_event_delete(&tp->ev);
	tp->have = false;
	if (!yaml_parser_parse(&tp->p, &tp->ev)) {
		yaml_mark_t m = tp->p.problem_mark;
		return err_set(tp->e, ERR_DATA, tp->path, (int)m.line + 1, (int)m.column + 1, "%s",
			       tp->p.problem ? tp->p.problem : _("invalid YAML"));
	}
	tp->have = true;
	return ERR_OK;
}

static const char *tp_scalar(struct tparser *tp)
{
	return (const char *)tp->ev.data.scalar.value;
}

static int parse_color(struct tparser *tp, short *out)
{
	const char *v = tp_scalar(tp);
	char *end;

	for (size_t i = 0; i < sizeof color_names / sizeof color_names[0]; i++)
		if (!strcmp(color_names[i].name, v)) {
			*out = color_names[i].n;
			return ERR_OK;
		}
	long n = strtol(v, &end, 10);
	if (*v && !*end && n >= 0 && n <= 255) {
		*out = (short)n;
		return ERR_OK;
	}
	return tp_fail(tp, &tp->ev.start_mark, _("unknown colour"), v);
}

static int parse_attr_word(struct tparser *tp, attr_t *out)
{
	const char *v = tp_scalar(tp);

	for (size_t i = 0; i < sizeof attr_names / sizeof attr_names[0]; i++)
		if (!strcmp(attr_names[i].name, v)) {
			*out |= attr_names[i].a;
			return ERR_OK;
		}
	return tp_fail(tp, &tp->ev.start_mark, _("unknown attribute"), v);
}

/* attrs: a word, a list of words, or words separated by spaces/commas in one scalar. */
static int parse_attrs(struct tparser *tp, attr_t *out)
{
	int rc;

	*out = A_NORMAL;
	if (tp->ev.type == YAML_SCALAR_EVENT) {
		char buf[256];
		snprintf(buf, sizeof buf, "%s", tp_scalar(tp));
		for (char *sp = NULL, *w = strtok_r(buf, " ,|+", &sp); w; w = strtok_r(NULL, " ,|+", &sp)) {
			bool ok = false;
			for (size_t i = 0; i < sizeof attr_names / sizeof attr_names[0]; i++)
				if (!strcmp(attr_names[i].name, w)) {
					*out |= attr_names[i].a;
					ok = true;
				}
			if (!ok)
				return tp_fail(tp, &tp->ev.start_mark, _("unknown attribute"), w);
		}
		return ERR_OK;
	}
	if (tp->ev.type != YAML_SEQUENCE_START_EVENT)
		return tp_fail(tp, &tp->ev.start_mark, _("expected an attribute or a list of them"),
			       NULL);
	for (;;) {
		if ((rc = tp_next(tp)))
			return rc;
		if (tp->ev.type == YAML_SEQUENCE_END_EVENT)
			return ERR_OK;
		if (tp->ev.type != YAML_SCALAR_EVENT)
			return tp_fail(tp, &tp->ev.start_mark, _("expected an attribute"), NULL);
		if ((rc = parse_attr_word(tp, out)))
			return rc;
	}
}

static int parse_role(struct tparser *tp, struct ui_style *st)
{
	int rc;

	if (tp->ev.type != YAML_MAPPING_START_EVENT)
		return tp_fail(tp, &tp->ev.start_mark, _("expected a mapping of fg, bg, attrs, mono"),
			       NULL);
	for (;;) {
		char key[32];
		if ((rc = tp_next(tp)))
			return rc;
		if (tp->ev.type == YAML_MAPPING_END_EVENT)
			return ERR_OK;
		if (tp->ev.type != YAML_SCALAR_EVENT)
			return tp_fail(tp, &tp->ev.start_mark, _("expected a key"), NULL);
		snprintf(key, sizeof key, "%s", tp_scalar(tp));
		yaml_mark_t km = tp->ev.start_mark;
		if ((rc = tp_next(tp)))
			return rc;
		if (!strcmp(key, "fg") || !strcmp(key, "bg")) {
			if (tp->ev.type != YAML_SCALAR_EVENT)
				return tp_fail(tp, &tp->ev.start_mark, _("expected a colour"), NULL);
			if ((rc = parse_color(tp, key[0] == 'f' ? &st->fg : &st->bg)))
				return rc;
		} else if (!strcmp(key, "attrs")) {
			if ((rc = parse_attrs(tp, &st->attrs)))
				return rc;
		} else if (!strcmp(key, "mono")) {
			if ((rc = parse_attrs(tp, &st->mono)))
				return rc;
		} else {
			return tp_fail(tp, &km, _("unknown key"), key);
		}
	}
}

/* Skips one node (scalar or whole collection) starting at the current event. */
static int skip_node(struct tparser *tp)
{
	int depth = 0, rc;

	do {
		if (tp->ev.type == YAML_MAPPING_START_EVENT || tp->ev.type == YAML_SEQUENCE_START_EVENT)
			depth++;
		else if (tp->ev.type == YAML_MAPPING_END_EVENT || tp->ev.type == YAML_SEQUENCE_END_EVENT)
			depth--;
		if (depth > 0 && (rc = tp_next(tp)))
			return rc;
	} while (depth > 0);
	return ERR_OK;
}

static int parse_theme(struct tparser *tp, struct ui_theme *t)
{
	int rc;

	do {
		if ((rc = tp_next(tp)))
			return rc;
	} while (tp->ev.type == YAML_STREAM_START_EVENT || tp->ev.type == YAML_DOCUMENT_START_EVENT);
	if (tp->ev.type != YAML_MAPPING_START_EVENT)
		return tp_fail(tp, &tp->ev.start_mark, _("a theme is a mapping with name and roles"),
			       NULL);
	for (;;) {
		char key[32];
		if ((rc = tp_next(tp)))
			return rc;
		if (tp->ev.type == YAML_MAPPING_END_EVENT)
			break;
		if (tp->ev.type != YAML_SCALAR_EVENT)
			return tp_fail(tp, &tp->ev.start_mark, _("expected a key"), NULL);
		snprintf(key, sizeof key, "%s", tp_scalar(tp));
		yaml_mark_t km = tp->ev.start_mark;
		if ((rc = tp_next(tp)))
			return rc;
		if (!strcmp(key, "name")) {
			if (tp->ev.type != YAML_SCALAR_EVENT)
				return tp_fail(tp, &tp->ev.start_mark, _("expected a name"), NULL);
			snprintf(t->name, sizeof t->name, "%s", tp_scalar(tp));
		} else if (!strcmp(key, "description")) {
			if ((rc = skip_node(tp)))
				return rc;
		} else if (!strcmp(key, "roles")) {
			if (tp->ev.type != YAML_MAPPING_START_EVENT)
				return tp_fail(tp, &tp->ev.start_mark, _("roles must be a mapping"),
					       NULL);
			for (;;) {
				int r = -1;
				if ((rc = tp_next(tp)))
					return rc;
				if (tp->ev.type == YAML_MAPPING_END_EVENT)
					break;
				if (tp->ev.type != YAML_SCALAR_EVENT)
					return tp_fail(tp, &tp->ev.start_mark, _("expected a role name"),
						       NULL);
				for (int i = 0; i < UI_R_COUNT; i++)
					if (!strcmp(role_names[i], tp_scalar(tp)))
						r = i;
				if (r < 0)
					return tp_fail(tp, &tp->ev.start_mark, _("unknown role"),
						       tp_scalar(tp));
				if ((rc = tp_next(tp)))
					return rc;
				/* A role written in the file starts blank: no colour unless given. */
				t->role[r] = (struct ui_style){ -1, -1, A_NORMAL, A_NORMAL };
				if ((rc = parse_role(tp, &t->role[r])))
					return rc;
			}
		} else {
			return tp_fail(tp, &km, _("unknown key"), key);
		}
	}
	return ERR_OK;
}

int ui_theme_load_file(const char *path, struct ui_theme *t, struct err *e)
{
	struct tparser tp = { .path = path, .e = e };
	struct ui_theme nt;
	FILE *fp = fopen(path, "rb");
	int rc;

	if (!fp)
		return err_set(e, ERR_NOINPUT, path, 0, 0, "%s", strerror(errno));
	ui_theme_default(&nt);
	yaml_parser_initialize(&tp.p);
	yaml_parser_set_input_file(&tp.p, fp);
	rc = parse_theme(&tp, &nt);
	if (tp.have)
		yaml_event_delete(&tp.ev);
	yaml_parser_delete(&tp.p);
	fclose(fp);
	if (rc) {
		ui_theme_default(t);
		return rc;
	}
	*t = nt;
	return ERR_OK;
}

/* ---- finding theme files --------------------------------------------------------------------- */

static bool valid_name(const char *name)
{
	if (!*name || name[0] == '.')
		return false;
	for (const char *p = name; *p; p++)
		if (!(*p == '-' || *p == '_' || *p == '.' || (*p >= '0' && *p <= '9') ||
		      (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			return false;
	return true;
}

/* The theme directories in lookup order; returns how many were written. */
static size_t theme_dirs(char dirs[4][1024])
{
	size_t n = 0;
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

	if (xdg && *xdg)
		snprintf(dirs[n++], 1024, "%s/oomfix/themes", xdg);
	else if (home && *home)
		snprintf(dirs[n++], 1024, "%s/.config/oomfix/themes", home);
	snprintf(dirs[n++], 1024, "%s", OOMFIX_THEMEDIR);
	snprintf(dirs[n++], 1024, "%s", OOMFIX_SOURCE_THEMEDIR);
	return n;
}

int ui_theme_load(const char *name, struct ui_theme *t, struct err *e)
{
	char dirs[4][1024], path[1200];
	struct stat st;

	if (strchr(name, '/'))
		return ui_theme_load_file(name, t, e);
	if (!valid_name(name))
		return err_set(e, ERR_USAGE, NULL, 0, 0, _("invalid theme name '%s'"), name);
	size_t nd = theme_dirs(dirs);
	for (size_t i = 0; i < nd; i++) {
		snprintf(path, sizeof path, "%s/%s.yaml", dirs[i], name);
		if (stat(path, &st) == 0)
			return ui_theme_load_file(path, t, e);
	}
	if (!strcmp(name, "default-dark") || !strcmp(name, "default")) {
		ui_theme_default(t);
		return ERR_OK;
	}
	ui_theme_default(t);
	return err_set(e, ERR_NOINPUT, NULL, 0, 0, _("theme '%s' not found"), name);
}

static int cmp_names(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	/* The default comes first so that `t` starts the cycle from it. */
	if (!strcmp(x, "default-dark"))
		return strcmp(y, "default-dark") ? -1 : 0;
	if (!strcmp(y, "default-dark"))
		return 1;
	return strcmp(x, y);
}

char **ui_theme_names(size_t *n)
{
	char dirs[4][1024];
	size_t nd = theme_dirs(dirs), cnt = 0, cap = 8;
	char **v = malloc(cap * sizeof *v);

	if (!v) {
		*n = 0;
		return NULL;
	}
	v[cnt++] = strdup("default-dark");
	for (size_t i = 0; i < nd; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *de;
		if (!d)
			continue;
		while ((de = readdir(d))) {
			size_t len = strlen(de->d_name);
			if (len < 6 || strcmp(de->d_name + len - 5, ".yaml"))
				continue;
			char name[256];
			snprintf(name, sizeof name, "%.*s", (int)(len - 5), de->d_name);
			if (!valid_name(name))
				continue;
			bool dup = false;
			for (size_t k = 0; k < cnt; k++)
				if (v[k] && !strcmp(v[k], name))
					dup = true;
			if (dup)
				continue;
			if (cnt == cap) {
				char **nv = realloc(v, cap * 2 * sizeof *v);
				if (!nv)
					break;
				v = nv;
				cap *= 2;
			}
			v[cnt++] = strdup(name);
		}
		closedir(d);
	}
	qsort(v, cnt, sizeof *v, cmp_names);
	*n = cnt;
	return v;
}

void ui_theme_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* ---- installing -------------------------------------------------------------------------------- */

static bool color_on;
static attr_t role_attr[UI_R_COUNT];

void ui_theme_init_colors(bool allow_color)
{
	color_on = false;
	if (!allow_color || !has_colors())
		return;
	if (start_color() == ERR)
		return;
	use_default_colors();
	/* One pair per role; a terminal that cannot hold them all gets the mono forms. */
	color_on = COLORS >= 8 && COLOR_PAIRS > UI_R_COUNT;
}

bool ui_theme_color_on(void)
{
	return color_on;
}

/* Maps a theme colour onto what the terminal has: bright colours fall back to their base
 * colour plus bold on 8-colour terminals, anything beyond that to the default. */
static short fit_color(short c, attr_t *extra)
{
	if (c < 0)
		return -1;
	if (c < COLORS)
		return c;
	if (c < 16) {
		*extra |= A_BOLD;
		return (short)(c & 7);
	}
	return -1;
}

void ui_theme_apply(const struct ui_theme *t)
{
	for (int i = 0; i < UI_R_COUNT; i++) {
		const struct ui_style *st = &t->role[i];
		if (!color_on) {
			role_attr[i] = st->mono;
			continue;
		}
		attr_t extra = A_NORMAL;
		short fg = fit_color(st->fg, &extra), bg = fit_color(st->bg, &extra);
		if (init_pair((short)(i + 1), fg, bg) == ERR) {
			/* No default colours (use_default_colors failed): white on black instead. */
			init_pair((short)(i + 1), fg < 0 ? COLOR_WHITE : fg, bg < 0 ? COLOR_BLACK : bg);
		}
		role_attr[i] = st->attrs | extra | COLOR_PAIR(i + 1);
	}
}

attr_t ui_attr(enum ui_role role)
{
	return role_attr[role];
}

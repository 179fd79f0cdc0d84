/* test_ui.c — unit tests of the UI's data: the action table (one key, one action, in every
 * context the UI uses), key names, theme files against the compiled-in default, theme errors
 * with their position, and line wrapping measured in cells. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <locale.h>
#include <unistd.h>
#include <cmocka.h>

#include "oomfix/text.h"
#include "keys.h"
#include "lines.h"
#include "theme.h"

/* The contexts the app combines (app.c current_ctx). */
static const unsigned contexts[] = {
	UI_CTX_VIEWS | UI_CTX_FIELDS, UI_CTX_VIEWS | UI_CTX_ADVANCED, UI_CTX_VIEWS | UI_CTX_LOG,
	UI_CTX_VIEWS, UI_CTX_HELP | UI_CTX_SCROLL, UI_CTX_WALK | UI_CTX_SCROLL, UI_CTX_CONFIRM,
	UI_CTX_PROMPT, UI_CTX_VIEWS | UI_CTX_PLAN | UI_CTX_TEXT, UI_CTX_VIEWS | UI_CTX_JOBS,
	UI_CTX_VIEWS | UI_CTX_RETRY,
};

static void test_no_key_bound_twice(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof contexts / sizeof contexts[0]; c++)
		for (size_t i = 0; i < ui_nactions; i++) {
			if (!(ui_actions[i].ctx & contexts[c]))
				continue;
			for (int k = 0; k < UI_MAX_KEYS && ui_actions[i].keys[k]; k++)
				for (size_t j = i + 1; j < ui_nactions; j++) {
					if (!(ui_actions[j].ctx & contexts[c]))
						continue;
					for (int m = 0; m < UI_MAX_KEYS && ui_actions[j].keys[m]; m++)
						if (ui_actions[i].keys[k] == ui_actions[j].keys[m])
							fail_msg("key %s bound to actions %d and %d in "
								 "context %#x",
								 ui_key_name(ui_actions[i].keys[k]),
								 ui_actions[i].act, ui_actions[j].act,
								 contexts[c]);
				}
		}
}

static void test_every_action_is_reachable(void **state)
{
	(void)state;
	for (int act = 1; act < UI_A_COUNT; act++) {
		bool found = false;
		for (size_t i = 0; i < ui_nactions; i++) {
			if (ui_actions[i].act != (enum ui_act)act)
				continue;
			found = true;
			assert_non_null(ui_actions[i].help);
			assert_true(strlen(ui_actions[i].help) > 3);
			assert_int_not_equal(ui_actions[i].keys[0], 0);
			assert_int_not_equal(ui_actions[i].ctx, 0);
		}
		if (!found)
			fail_msg("action %d has no row in the table", act);
	}
}

static void test_dispatch_uses_context(void **state)
{
	(void)state;
	assert_int_equal(ui_action_for(UI_CTX_VIEWS | UI_CTX_FIELDS, '\n'), UI_A_EDIT);
	assert_int_equal(ui_action_for(UI_CTX_VIEWS | UI_CTX_LOG, '\n'), UI_A_JUMP);
	assert_int_equal(ui_action_for(UI_CTX_PROMPT, '\n'), UI_A_PROMPT_OK);
	assert_int_equal(ui_action_for(UI_CTX_VIEWS, 'a'), UI_A_APPLY_FIRST);
	assert_int_equal(ui_action_for(UI_CTX_WALK | UI_CTX_SCROLL, 'a'), UI_A_WALK_APPLY);
	assert_int_equal(ui_action_for(UI_CTX_VIEWS, UI_CTRL('r')), UI_A_REDO);
	assert_int_equal(ui_action_for(UI_CTX_VIEWS, '/'), UI_A_NONE);
	assert_int_equal(ui_action_for(UI_CTX_VIEWS | UI_CTX_LOG, '/'), UI_A_SEARCH);
	assert_int_equal(ui_action_for(UI_CTX_CONFIRM, 'y'), UI_A_YES);
	assert_int_equal(ui_action_for(UI_CTX_CONFIRM, 'a'), UI_A_NONE);
}

static void test_key_names_round_trip(void **state)
{
	(void)state;
	for (size_t i = 0; i < ui_nactions; i++)
		for (int k = 0; k < UI_MAX_KEYS && ui_actions[i].keys[k]; k++) {
			int key = ui_actions[i].keys[k];
			char name[32];
			snprintf(name, sizeof name, "%s", ui_key_name(key));
			assert_int_equal(ui_key_parse(name), key);
		}
	assert_int_equal(ui_key_parse("C-r"), UI_CTRL('r'));
	assert_int_equal(ui_key_parse("Tab"), '\t');
	assert_int_equal(ui_key_parse("nonsense"), 0);
	assert_int_equal(ui_key_parse("\xe8\xa8\xad"), 0x8A2D); /* one wide character */
}

static char *theme_path(const char *name)
{
	static char buf[1024];
	const char *root = getenv("SOURCE_ROOT");
	snprintf(buf, sizeof buf, "%s/themes/%s.yaml", root ? root : ".", name);
	return buf;
}

static void test_default_theme_file_matches_builtin(void **state)
{
	struct ui_theme file, builtin;
	struct err e;

	(void)state;
	ui_theme_default(&builtin);
	assert_int_equal(ui_theme_load_file(theme_path("default-dark"), &file, &e), ERR_OK);
	for (int r = 0; r < UI_R_COUNT; r++) {
		if (file.role[r].fg != builtin.role[r].fg || file.role[r].bg != builtin.role[r].bg ||
		    file.role[r].attrs != builtin.role[r].attrs ||
		    file.role[r].mono != builtin.role[r].mono)
			fail_msg("role %d differs between themes/default-dark.yaml and theme.c", r);
	}
}

/* Roles whose meaning must survive without colour. */
static const enum ui_role meaningful[] = {
	UI_R_TAB_ACTIVE, UI_R_ERROR, UI_R_CURSOR, UI_R_CHANGED, UI_R_OOM, UI_R_MATCH,
	UI_R_DIFF_ADD, UI_R_HEADING, UI_R_DIALOG,
};

static void test_every_theme_parses_with_mono_forms(void **state)
{
	static const char *const names[] = { "default-dark", "light", "high-contrast", "mono" };
	(void)state;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		struct ui_theme t;
		struct err e;
		if (ui_theme_load_file(theme_path(names[i]), &t, &e) != ERR_OK)
			fail_msg("%s: %s:%d:%d: %s", names[i], e.file, e.line, e.col, e.msg);
		assert_string_equal(t.name, names[i]);
		for (size_t k = 0; k < sizeof meaningful / sizeof meaningful[0]; k++)
			if (t.role[meaningful[k]].mono == A_NORMAL)
				fail_msg("%s: role %d has no mono form", names[i], meaningful[k]);
	}
}

static void test_bad_theme_says_where(void **state)
{
	char path[] = "/tmp/oomfix-theme-XXXXXX";
	int fd = mkstemp(path);
	struct ui_theme t;
	struct err e;
	const char *text = "name: x\nroles:\n  normal: { fg: red }\n  no-such-role: { fg: red }\n";

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(ui_theme_load_file(path, &t, &e), ERR_DATA);
	assert_int_equal(e.line, 4);
	assert_int_equal(e.col, 3);
	assert_non_null(strstr(e.msg, "no-such-role"));
	/* A failed load leaves the default in place. */
	assert_string_equal(t.name, "default-dark");
	unlink(path);
}

/* Loads `text` as a theme file; returns the status. */
static int load_theme_text(const char *text, struct ui_theme *t, struct err *e)
{
	char path[] = "/tmp/oomfix-theme-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	int rc = ui_theme_load_file(path, t, e);
	unlink(path);
	return rc;
}

/* Each mistake is reported where it is, the first one in the file order, with its own words. */
static void test_theme_errors_point_at_the_node(void **state)
{
	static const struct { const char *text; int line, col; const char *msg; } cases[] = {
		{ "name: x\nbogus: 1\n", 2, 1, "unknown key 'bogus'" },
		{ "name: [x]\n", 1, 7, "expected a name" },
		{ "roles: 3\n", 1, 8, "roles must be a mapping" },
		{ "roles:\n  error: [1]\n", 2, 10, "expected a mapping of fg, bg, attrs, mono" },
		{ "roles:\n  error: {fg: [1]}\n", 2, 15, "expected a colour" },
		{ "roles:\n  error: {fg: 256}\n", 2, 15, "unknown colour '256'" },
		{ "roles:\n  error: {wat: 1, fg: nope}\n", 2, 11, "unknown key 'wat'" },
		{ "roles:\n  error: {attrs: \"bold wobble\"}\n", 2, 18, "unknown attribute 'wobble'" },
		{ "roles:\n  error: {mono: [bold, \"bold,dim\"]}\n", 2, 24,
		  "unknown attribute 'bold,dim'" },
		{ "roles:\n  error: {mono: [bold, [dim]]}\n", 2, 24, "expected an attribute" },
		{ "roles:\n  error: {mono: {a: b}}\n", 2, 17, "expected an attribute or a list of them" },
		{ "roles:\n  [x]: {}\n", 2, 3, "expected a role name" },
		{ "roles:\n  error: &a {fg: red}\n  oom: *a\n", 3, 8,
		  "expected a mapping of fg, bg, attrs, mono" },
		{ "- a\n", 1, 1, "a theme is a mapping with name and roles" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ui_theme t;
		struct err e;
		if (load_theme_text(cases[i].text, &t, &e) != ERR_DATA || e.line != cases[i].line ||
		    e.col != cases[i].col || !strstr(e.msg, cases[i].msg))
			fail_msg("case %zu: got %d:%d: %s; want %d:%d: %s", i, e.line, e.col, e.msg,
				 cases[i].line, cases[i].col, cases[i].msg);
		assert_string_equal(t.name, "default-dark");
	}
}

/* A role the file writes starts blank; the roles it leaves out keep the default's style. */
static void test_theme_roles_start_blank(void **state)
{
	struct ui_theme t, def;
	struct err e;

	(void)state;
	ui_theme_default(&def);
	assert_int_equal(load_theme_text("name: t\ndescription: [any, {thing: 1}]\nroles:\n"
					 "  error: {bg: bright-blue, attrs: bold|underline}\n"
					 "  cursor: {mono: [bold, dim]}\n",
					 &t, &e),
			 ERR_OK);
	assert_string_equal(t.name, "t");
	assert_int_equal(t.role[UI_R_ERROR].fg, -1);
	assert_int_equal(t.role[UI_R_ERROR].bg, 12);
	assert_int_equal(t.role[UI_R_ERROR].attrs, A_BOLD | A_UNDERLINE);
	assert_int_equal(t.role[UI_R_ERROR].mono, A_NORMAL);
	assert_int_equal(t.role[UI_R_CURSOR].mono, A_BOLD | A_DIM);
	assert_int_equal(t.role[UI_R_TABBAR].bg, def.role[UI_R_TABBAR].bg);
	assert_int_equal(t.role[UI_R_TABBAR].mono, def.role[UI_R_TABBAR].mono);
}

static void test_wrap_measures_cells(void **state)
{
	struct ui_lines l = { 0 };
	/* 設定 is two cells per character: a wrap counting bytes or characters would overflow. */
	const char *ja = "\xe8\xa8\xad\xe5\xae\x9a\xe3\x82\x92\xe5\xa4\x89\xe6\x9b\xb4\xe3\x81\x97"
			 "\xe3\x81\xbe\xe3\x81\x99\xe8\xa8\xad\xe5\xae\x9a\xe3\x82\x92\xe5\xa4\x89"
			 "\xe6\x9b\xb4\xe3\x81\x97\xe3\x81\xbe\xe3\x81\x99";
	(void)state;
	ui_lines_wrap(&l, UI_R_NORMAL, ja, 11, 1);
	assert_true(l.n >= 3);
	size_t total = 0;
	for (size_t i = 0; i < l.n; i++) {
		assert_true(text_width(l.v[i].text, l.v[i].len) <= 11);
		total += l.v[i].len - 1; /* minus the indent */
	}
	assert_int_equal(total, strlen(ja)); /* nothing lost, no character split */
	ui_lines_free(&l);

	ui_lines_wrap(&l, UI_R_NORMAL, "one two three four five six seven", 12, 0);
	for (size_t i = 0; i < l.n; i++) {
		assert_true(text_width(l.v[i].text, l.v[i].len) <= 12);
		assert_true(l.v[i].text[0] != ' ');
	}
	assert_string_equal(l.v[0].text, "one two");
	ui_lines_free(&l);
}

/* text_wrap_next cuts a table cell after the last whole word that fits, never inside a word that
 * would fit on the next line, and never inside a character. */
static void test_wrap_next_whole_words(void **state)
{
	const char *s = "model load, caching or baseline sample";
	size_t next, cut;

	(void)state;
	cut = text_wrap_next(s, strlen(s), 27, &next);
	assert_int_equal(cut, strlen("model load, caching or"));
	assert_string_equal(s + next, "baseline sample");
	/* It fits: all of it, and nothing left. */
	cut = text_wrap_next(s + next, strlen(s + next), 27, &next);
	assert_int_equal(cut, strlen("baseline sample"));
	/* A word wider than the cell is cut where the cells run out. */
	cut = text_wrap_next("abcdefghij klm", 14, 4, &next);
	assert_int_equal(cut, 4);
	assert_int_equal(next, 4);
	/* Japanese has no spaces: cut at a character boundary, 2 cells each (3 bytes each). */
	const char *ja = "\u8a2d\u5b9a\u3092\u5909\u66f4"; /* 設定を変更 */
	cut = text_wrap_next(ja, strlen(ja), 5, &next);
	assert_int_equal(cut, 6);
	assert_int_equal(next, 6);
	/* Not even one character fits: one whole character anyway, so wrapping always moves on. */
	cut = text_wrap_next(ja, strlen(ja), 1, &next);
	assert_int_equal(cut, 3);
}

static void test_lines_are_sanitised(void **state)
{
	struct ui_lines l = { 0 };
	(void)state;
	struct ui_line *ln = ui_lines_add(&l, UI_R_NORMAL, "a\x1b]52;c;ZXZpbA==\x07" "b");
	ui_line_append(ln, UI_R_VALUE, "\xc2\x9d" "52;c;x\x07");
	for (size_t i = 0; i < ln->len; i++) {
		unsigned char c = (unsigned char)ln->text[i];
		assert_true(c >= 0x20 && c != 0x7f);
		if (c == 0xc2)
			assert_true((unsigned char)ln->text[i + 1] != 0x9d);
	}
	assert_int_equal(ln->nseg, 2);
	ui_lines_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_key_bound_twice),
		cmocka_unit_test(test_every_action_is_reachable),
		cmocka_unit_test(test_dispatch_uses_context),
		cmocka_unit_test(test_key_names_round_trip),
		cmocka_unit_test(test_default_theme_file_matches_builtin),
		cmocka_unit_test(test_every_theme_parses_with_mono_forms),
		cmocka_unit_test(test_bad_theme_says_where),
		cmocka_unit_test(test_theme_errors_point_at_the_node),
		cmocka_unit_test(test_theme_roles_start_blank),
		cmocka_unit_test(test_wrap_measures_cells),
		cmocka_unit_test(test_wrap_next_whole_words),
		cmocka_unit_test(test_lines_are_sanitised),
	};
	setlocale(LC_ALL, "");
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_prompt.c — unit tests of the UI's questions and line editor (src/ui/prompt.c): a question
 * asked with ui_ask is answered by its own handler with y, n or one of its own keys, returns to
 * the mode it was asked from, and scrolls what is behind it with the other keys; a no cancels a
 * pending "save, then quit"; a line asked for with ui_prompt_start goes to its own handler, a
 * line the view asked for is the view's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "app.h"

static struct ui_app app;
static struct ui_ctx ctx;
static int answers[8];
static int nanswers;

static void record(struct ui_app *a, const struct ui_ctx *c, int key)
{
	(void)c;
	assert_int_not_equal(a->mode, UI_M_CONFIRM); /* back in the mode it was asked from */
	if (nanswers < 8)
		answers[nanswers++] = key;
}

static const struct ui_question plain = {
	.text = "Do it? y = yes, n = no",
	.answer = record,
};

static const struct ui_question with_p = {
	.text = "Do it? y = yes, p = yes with a probe, n = no",
	.keys = "p",
	.answer = record,
};

static int setup(void **state)
{
	(void)state;
	memset(&app, 0, sizeof app);
	ctx = (struct ui_ctx){ .page = 10, .msg = &app.msg };
	nanswers = 0;
	return 0;
}

static void test_yes_and_no_reach_the_handler(void **state)
{
	(void)state;
	ui_ask(&app, &plain, UI_M_NORMAL);
	assert_int_equal(app.mode, UI_M_CONFIRM);
	assert_true(ui_asking(&app, &plain));
	assert_false(ui_asking(&app, &with_p));
	assert_string_equal(ui_question_text(&app), plain.text);
	ui_question_key(&app, &ctx, UI_A_YES, 'y');
	assert_int_equal(nanswers, 1);
	assert_int_equal(answers[0], 'y');
	assert_int_equal(app.mode, UI_M_NORMAL);
	assert_false(ui_asking(&app, &plain));

	ui_ask(&app, &plain, UI_M_HELP);
	ui_question_key(&app, &ctx, UI_A_NO, 'n');
	assert_int_equal(nanswers, 2);
	assert_int_equal(answers[1], 'n');
	assert_int_equal(app.mode, UI_M_HELP);
}

static void test_own_keys_only_where_asked(void **state)
{
	(void)state;
	ui_ask(&app, &plain, UI_M_NORMAL);
	ui_question_key(&app, &ctx, UI_A_NONE, 'p'); /* not this question's key: nothing */
	assert_int_equal(nanswers, 0);
	assert_int_equal(app.mode, UI_M_CONFIRM);

	ui_ask(&app, &with_p, UI_M_WALK);
	ui_question_key(&app, &ctx, UI_A_NONE, 'P'); /* either case */
	assert_int_equal(nanswers, 1);
	assert_int_equal(answers[0], 'p');
	assert_int_equal(app.mode, UI_M_WALK);
}

static void test_other_keys_scroll_behind(void **state)
{
	(void)state;
	ui_ask(&app, &plain, UI_M_NORMAL);
	ui_question_key(&app, &ctx, UI_A_DOWN, 'j');
	ui_question_key(&app, &ctx, UI_A_PGDN, ' ');
	assert_int_equal(app.save_pos.cursor, 11);
	assert_int_equal(nanswers, 0);
	assert_int_equal(app.mode, UI_M_CONFIRM);
}

static void test_no_cancels_save_then_quit(void **state)
{
	(void)state;
	app.quit_after_save = true;
	ui_ask(&app, &plain, UI_M_NORMAL);
	ui_question_key(&app, &ctx, UI_A_YES, 'y');
	assert_true(app.quit_after_save);
	ui_ask(&app, &plain, UI_M_NORMAL);
	ui_question_key(&app, &ctx, UI_A_NO, 'n');
	assert_false(app.quit_after_save);
}

static int lines_done, lines_ok;
static char line_seen[64];

static void line_done(struct ui_app *a, const struct ui_ctx *c, bool ok)
{
	(void)c;
	lines_done++;
	lines_ok = ok;
	snprintf(line_seen, sizeof line_seen, "%.*s", (int)a->prompt.len, a->prompt.buf);
}

static void type(const char *s)
{
	for (; *s; s++)
		ui_prompt_key(&app, &ctx, UI_A_NONE, (unsigned char)*s);
}

static void test_line_goes_to_its_asker(void **state)
{
	(void)state;
	lines_done = 0;
	ui_prompt_start(&app, "Run the job with: ", "ab", line_done);
	assert_int_equal(app.mode, UI_M_PROMPT);
	assert_int_equal(app.prompt.kind, UI_P_LINE);
	assert_int_equal(app.prompt.cur, 2);
	type("c");
	ui_prompt_key(&app, &ctx, UI_A_PROMPT_LEFT, 0);
	type("x");
	assert_false(ui_prompt_key(&app, &ctx, UI_A_PROMPT_OK, '\r'));
	assert_int_equal(lines_done, 1);
	assert_true(lines_ok);
	assert_string_equal(line_seen, "abxc");
	assert_int_equal(app.mode, UI_M_NORMAL);
	assert_null(app.prompt_done);

	ui_prompt_start(&app, "Run the job with: ", NULL, line_done);
	type("y");
	assert_false(ui_prompt_key(&app, &ctx, UI_A_PROMPT_CANCEL, 27));
	assert_int_equal(lines_done, 2);
	assert_false(lines_ok);
	assert_null(app.prompt_done);
}

static void test_line_the_view_asked_for(void **state)
{
	(void)state;
	lines_done = 0;
	/* A view opens its own prompt (the search, a field) without a handler: the line is its. */
	app.mode = UI_M_PROMPT;
	app.prompt.kind = UI_P_SEARCH;
	type("oom");
	assert_true(ui_prompt_key(&app, &ctx, UI_A_PROMPT_OK, '\r'));
	assert_int_equal(app.mode, UI_M_NORMAL);
	assert_int_equal(lines_done, 0);

	app.mode = UI_M_PROMPT;
	assert_false(ui_prompt_key(&app, &ctx, UI_A_PROMPT_CANCEL, 27));
	assert_string_equal(app.msg.text, "Cancelled.");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_yes_and_no_reach_the_handler, setup),
		cmocka_unit_test_setup(test_own_keys_only_where_asked, setup),
		cmocka_unit_test_setup(test_other_keys_scroll_behind, setup),
		cmocka_unit_test_setup(test_no_cancels_save_then_quit, setup),
		cmocka_unit_test_setup(test_line_goes_to_its_asker, setup),
		cmocka_unit_test_setup(test_line_the_view_asked_for, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

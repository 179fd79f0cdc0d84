/* text.h: what reaches a terminal. text_visible shows an escape sequence as text; text_sanitize
 * drops it; both leave no byte that a terminal would act on. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "oomfix/text.h"

static void no_control_bytes(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		assert_false(*p == 0x1B || *p == 0x07 || (*p < 0x20 && *p != '\t') || *p == 0x7F);
		if (p[0] == 0xC2)
			assert_false(p[1] >= 0x80 && p[1] <= 0x9F);
	}
}

static void test_visible_shows_osc52(void **state)
{
	(void)state;
	const char in[] = "copy \033]52;c;aGk=\007 and \xc2\x9d" "0;title\007 done";
	char out[256];
	size_t n = text_visible(in, sizeof in - 1, out, sizeof out);
	assert_int_equal(n, strlen(out));
	assert_non_null(strstr(out, "^[]52;c;aGk=^G"));
	assert_non_null(strstr(out, "\\xC2\\x9D0;title^G done"));
	no_control_bytes(out);
}

static void test_sanitize_drops_sequences(void **state)
{
	(void)state;
	const char in[] = "\033[31mred\033[0m \033]52;c;aGk=\007end";
	char out[256];
	text_sanitize(in, sizeof in - 1, out, sizeof out);
	assert_string_equal(out, "red end");
}

static void test_visible_cell_shows_tab(void **state)
{
	(void)state;
	const char in[] = "a\tb\nc\033[1mÃ¼"; /* TAB, newline, a CSI sequence, ü */
	char out[64];
	text_visible(in, sizeof in - 1, out, sizeof out);
	assert_string_equal(out, "a\tb^Jc^[[1mÃ¼"); /* a log line keeps its TAB */
	size_t n = text_visible_cell(in, sizeof in - 1, out, sizeof out);
	assert_int_equal(n, strlen(out));
	assert_string_equal(out, "a^Ib^Jc^[[1mÃ¼");
}

static void test_small_buffer_never_splits(void **state)
{
	(void)state;
	const char in[] = "ab\033c\xe7\x8c\xab"; /* a, b, ESC shown as ^[, c, a 3-byte character */
	char out[8];
	size_t n = text_visible(in, sizeof in - 1, out, sizeof out);
	/* "ab^[c" is 5 bytes; the cat needs 3 more plus the NUL, so it is left out whole. */
	assert_int_equal(n, 5);
	assert_string_equal(out, "ab^[c");
}

static void test_utf8_decode(void **state)
{
	(void)state;
	uint32_t cp;
	assert_int_equal(text_utf8_decode((const unsigned char *)"\xe7\x8c\xab", 3, &cp), 3);
	assert_int_equal(cp, 0x732B);
	assert_int_equal(text_utf8_decode((const unsigned char *)"\xc0\xaf", 2, &cp), 0);     /* overlong */
	assert_int_equal(text_utf8_decode((const unsigned char *)"\xed\xa0\x80", 3, &cp), 0); /* surrogate */
	assert_int_equal(text_utf8_decode((const unsigned char *)"\xe7\x8c", 2, &cp), 0);     /* cut short */
	assert_int_equal(text_utf8_decode((const unsigned char *)"\xf4\x90\x80\x80", 4, &cp), 0);
}

/* Wraps s at width and joins the lines with '|' for comparison. */
static void wrap(const char *s, int width, char *out, size_t outsz)
{
	size_t len = strlen(s), o = 0;
	out[0] = '\0';
	while (len) {
		size_t next, cut = text_wrap_next(s, len, width, &next);
		assert_true(next > 0); /* always progresses */
		assert_true(text_width(s, cut) <= width || cut <= 4);
		o += (size_t)snprintf(out + o, outsz - o, "%s%.*s", o ? "|" : "", (int)cut, s);
		s += next;
		len -= next;
	}
}

static void test_wrap(void **state)
{
	(void)state;
	char out[512];
	wrap("the quick brown fox", 10, out, sizeof out);
	assert_string_equal(out, "the quick|brown fox");
	wrap("abcdefghijkl mn", 5, out, sizeof out); /* a word wider than the line is cut */
	assert_string_equal(out, "abcde|fghij|kl mn");
	/* Japanese breaks between characters; 。 and 、 never start a line. */
	wrap("\xe5\xad\xa6\xe7\xbf\x92\xe3\x81\x8c\xe6\xad\xa2\xe3\x81\xbe\xe3\x82\x8a"
	     "\xe3\x81\xbe\xe3\x81\x97\xe3\x81\x9f\xe3\x80\x82", 6, out, sizeof out);
	/* 学習が止まりました。 at 6 cells: 学習が|止まり|ました。 would put 。 alone; it stays
	 * with the character before it. */
	assert_null(strstr(out, "|\xe3\x80\x82"));
	assert_non_null(strstr(out, "|"));
	/* A space in Japanese text near the start does not leave a short line; the break falls
	 * after the particle, not inside the verb: Batch Sizeを|下げます. */
	wrap("Batch Size\xe3\x82\x92\xe4\xb8\x8b\xe3\x81\x92\xe3\x81\xbe\xe3\x81\x99", 14,
	     out, sizeof out);
	assert_string_equal(out, "Batch Size\xe3\x82\x92|\xe4\xb8\x8b\xe3\x81\x92\xe3\x81\xbe"
				 "\xe3\x81\x99");
}

static void test_ascii(void **state)
{
	(void)state;
	char s[128];
	size_t n;

	snprintf(s, sizeof s, "%s", "2 \xe2\x86\x92 1, 1024\xc3\x97"
		 "1024 \xe2\x80\x94 wait\xe2\x80\xa6");
	n = text_ascii(s, strlen(s));
	s[n] = '\0';
	assert_string_equal(s, "2 -> 1, 1024x1024 - wait...");
	snprintf(s, sizeof s, "%s", "|\xe2\x96\x88\xe2\x96\x88\xe2\x96\x8c |");
	n = text_ascii(s, strlen(s));
	s[n] = '\0';
	assert_string_equal(s, "|### |");
	/* anything else becomes one '?' per character, and the text never grows */
	snprintf(s, sizeof s, "%s", "\xe6\x97\xa5\xe6\x9c\xac ok");
	n = text_ascii(s, strlen(s));
	s[n] = '\0';
	assert_string_equal(s, "?? ok");
	assert_int_equal(text_width(s, n), 5);
}

/* A long name loses its middle, marked; two names that would read the same that way are cut at
 * their end instead, where they differ (E16, E17); Japanese counts two cells a character. */
static void test_cut_apart(void **state)
{
	(void)state;
	char out[256];
	const char *v1 = "portrait_flux_lora_rank32_v1_with_a_long_descriptive_name";
	const char *v2 = "portrait_flux_lora_rank32_v2_with_a_long_descriptive_name";
	const char *names[] = { v1, v2, "qwen style" };
	text_cut_middle(v1, 36, "~", out, sizeof out);
	assert_int_equal(text_width(out, strlen(out)), 36);
	assert_non_null(strstr(out, "~"));
	assert_true(strncmp(out, "portrait", 8) == 0);
	assert_true(strlen(out) > 4 && strcmp(out + strlen(out) - 4, "name") == 0);
	text_cut_apart(v1, names, 3, 36, "~", out, sizeof out);
	assert_string_equal(out, "portrait_flux_lora_rank32_v1_with_a~");
	text_cut_apart(v2, names, 3, 36, "~", out, sizeof out);
	assert_string_equal(out, "portrait_flux_lora_rank32_v2_with_a~");
	/* the differing character just inside the cells is enough (30 cells: "..._v1_~") */
	text_cut_apart(v1, names, 3, 30, "~", out, sizeof out);
	assert_string_equal(out, "portrait_flux_lora_rank32_v1_~");
	/* a short name and one that does not clash keep the plain forms */
	text_cut_apart("qwen style", names, 3, 36, "~", out, sizeof out);
	assert_string_equal(out, "qwen style");
	const char *apart[] = { v1, "another_very_long_job_name_that_ends_elsewhere_entirely" };
	char plain[256];
	text_cut_middle(v1, 20, "~", plain, sizeof plain);
	text_cut_apart(v1, apart, 2, 20, "~", out, sizeof out);
	assert_string_equal(out, plain);
	/* the difference beyond the cells: the middle cut stays */
	text_cut_middle(v1, 15, "~", plain, sizeof plain);
	text_cut_apart(v1, names, 3, 15, "~", out, sizeof out);
	assert_string_equal(out, plain);
	/* wide characters */
	text_cut_middle("日本語のとても長いジョブの名前です", 11, "~", out, sizeof out);
	assert_true(text_width(out, strlen(out)) <= 11);
	assert_non_null(strstr(out, "~"));
}

int main(void)
{
	setlocale(LC_ALL, ""); /* widths come from the UTF-8 locale the suite runs in */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_visible_shows_osc52),
		cmocka_unit_test(test_sanitize_drops_sequences),
		cmocka_unit_test(test_visible_cell_shows_tab),
		cmocka_unit_test(test_small_buffer_never_splits),
		cmocka_unit_test(test_utf8_decode),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_ascii),
		cmocka_unit_test(test_cut_apart),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

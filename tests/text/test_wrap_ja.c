/* Japanese line breaking in text_wrap_next, on the sentences of the Japanese review, at the
 * terminal widths it was read at (60, 72, 76, 80, 100) and at the widths the reports leave for
 * their hanging text (the width less the 23-cell timing column, less the 31-cell checklist
 * head). Every line break must fall where Japanese allows one. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "oomfix/text.h"

static const char *const sentences[] = {
	"モデルの読み込み、latentやテキスト埋め込みのキャッシュ、またはベースラインサンプルに、"
	"GPUのメモリが足りません。",
	"最初の変更：モデルの読み込みにはlow_vram、キャッシュには最大バケットの縮小かフレーム数の削減、"
	"ベースラインにはサンプルの軽量化か無効化。",
	"学習は収まっていますが、プレビューのサンプルが学習のバッチより大きいです。",
	"ロールバック手順（ジョブ未指定のため、対応済みかは判定できません）:",
	"プレビューのサンプルを軽くする",
	"学習の1ステップが収まりません。バッチ、解像度、フレーム数、活性化のいずれかが大きすぎます。"
	"1ステップ自体が収まっていません。",
	"Batch Sizeを下げた — Batch Size 2 → 1、gradient_accumulation_steps 1 → 2",
	"再試行を成功させたメモリ設定はそのまま保ってください。train.stepsを増やし、500ステップごとに"
	"サンプルを確認してください。",
	"Web UI のジョブ（aitk:NAME）には CMD を付けません。oomfix は UI の開始ボタンと同じように"
	"ジョブをキューに入れ、データベースを通して UI のワーカーを追い、その実行の log.txt を表示"
	"します（写しは実行フォルダの job_config.json.oomfix-runs/<n>.log に残します）。",
	"LOG が、JOB に最後に保存した変更（日時は変更記録にあります）より古いときは、'next' は"
	"拒否されます（75）。--force を付けて古いログから選んでください。",
	"実行中に書き足されるログを追い、追記分だけを読んで判定を更新し、判定が変わるたびに出力する"
	"（--json では 1 行に 1 つの JSON オブジェクト）。",
	"サポートに連絡してください。ときどき、このアーキテクチャではサンプルの大きさが2〜3割ほど増えます。"
	"config.process[0].train.gradient_accumulation_steps を 8 GiB のGPUでは 2 倍にします。",
	"未保存の変更があります。終了しますか？ s = 保存して終了、y = 保存せずに終了、n = 続ける",
	"学習の 1 ステップが VRAM に収まりません。バッチ、解像度、フレーム数、アクティベーションの"
	"いずれかが大きすぎます。",
};

static bool is_kata(uint32_t cp)
{
	return (cp >= 0x30A1 && cp <= 0x30FA) || cp == 0x30FC;
}

static bool is_ascii_word(uint32_t cp)
{
	return cp > 0x20 && cp < 0x7F;
}

static bool is_digit(uint32_t cp)
{
	return cp >= '0' && cp <= '9';
}

/* The code points before and after a break at s[cut] (the next line starting at s[next]). */
static uint32_t last_cp(const char *s, size_t cut)
{
	size_t i = cut;
	uint32_t cp = 0;
	while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
		i--;
	if (i > 0)
		i--;
	text_utf8_decode((const unsigned char *)s + i, cut - i, &cp);
	return cp;
}

static uint32_t first_cp(const char *s, size_t len)
{
	uint32_t cp = 0;
	if (len)
		text_utf8_decode((const unsigned char *)s, len, &cp);
	return cp;
}

static bool in(uint32_t cp, const uint32_t *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == cp)
			return true;
	return false;
}

/* Cells of the run of ASCII non-blank characters around s[cut]. */
static int ascii_run(const char *s, size_t cut, size_t len)
{
	size_t a = cut, b = cut;
	while (a > 0 && s[a - 1] > 0x20 && s[a - 1] < 0x7F)
		a--;
	while (b < len && s[b] > 0x20 && s[b] < 0x7F)
		b++;
	return (int)(b - a);
}

static int failures;

static void bad(const char *why, int width, const char *line, const char *rest)
{
	failures++;
	print_message("width %d: %s: [%s] | [%.30s]\n", width, why, line, rest);
}

/* Wraps s at `width` and checks every break. */
static void check(const char *s, int width)
{
	static const uint32_t closing[] = { 0x3001, 0x3002, 0xFF09, 0x300D, 0x300F, 0x3011, 0x30FC,
					    0x3063, 0x30C3, 0x30E3, 0x30E5, 0x30E7, 0xFF1F, 0xFF01 };
	static const uint32_t opening[] = { 0xFF08, 0x300C, 0x300E, 0x3010 };
	size_t len = strlen(s);
	int lines = 0;
	char line[512];

	while (len) {
		size_t next, cut = text_wrap_next(s, len, width, &next);
		assert_true(next > 0 && next <= len);
		snprintf(line, sizeof line, "%.*s", (int)cut, s);
		lines++;
		if (text_width(s, cut) > width)
			bad("too wide", width, line, s + next);
		if (next < len) {
			uint32_t a = last_cp(s, cut), b = first_cp(s + next, len - next);
			bool spaced = next > cut;
			if (!spaced && is_kata(a) && is_kata(b))
				bad("katakana word split", width, line, s + next);
			if (!spaced && is_ascii_word(a) && is_ascii_word(b)) {
				/* only an identifier wider than the line may be cut, and then after
				 * one of its separators */
				if (ascii_run(s, cut, len) <= width)
					bad("ASCII word split", width, line, s + next);
				else if (!strchr("._/-[]", (int)a))
					bad("long identifier cut mid-name", width, line, s + next);
			}
			if (is_digit(a) && (b >= 0x80 || !strncmp(s + next, "GiB", 3)))
				bad("number split from its unit", width, line, s + next);
			if ((a == 0x301C || a == 0x2192) && is_digit(b))
				bad("range split", width, line, s + next);
			if (a == 0x2192 || b == 0x2192)
				bad("arrow split from its value", width, line, s + next);
			if (a == '=' || b == '=')
				bad("key split from its meaning", width, line, s + next);
			if (in(b, closing, sizeof closing / sizeof closing[0]))
				bad("closing punctuation starts a line", width, line, s + next);
			if (in(a, opening, sizeof opening / sizeof opening[0]))
				bad("opening bracket ends a line", width, line, s + next);
			/* the rest fits on one line and is no more than 「す。」 */
			int rest = text_width(s + next, len - next);
			if (!memchr(s + next, ' ', len - next) && rest <= 4 &&
			    (rest <= 2 || in(last_cp(s, len), closing, 14)))
				bad("orphan on the last line", width, line, s + next);
		}
		s += next;
		len -= next;
	}
	assert_true(lines > 0);
}

static void test_review_sentences(void **state)
{
	(void)state;
	static const int cols[] = { 60, 72, 76, 80, 100 };
	failures = 0;
	for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++)
		for (size_t k = 0; k < sizeof sentences / sizeof sentences[0]; k++) {
			check(sentences[k], cols[c]);
			check(sentences[k], cols[c] - 23); /* diagnose: after the timing column */
			check(sentences[k], cols[c] - 31); /* plan: after the checklist head */
		}
	assert_int_equal(failures, 0);
}

/* The review's own example: at 76 columns (53 cells after the timing column) 「キャッシュ」 stays
 * whole and moves to the next line. */
static void test_katakana_moves_whole(void **state)
{
	(void)state;
	const char *s = sentences[0];
	size_t next, cut = text_wrap_next(s, strlen(s), 53, &next);
	char line[256];
	snprintf(line, sizeof line, "%.*s", (int)cut, s);
	assert_string_equal(line, "モデルの読み込み、latentやテキスト埋め込みの");
	assert_true(strncmp(s + next, "キャッシュ、", strlen("キャッシュ、")) == 0);
}

/* 「…大きいで|す。」 at 37 cells (60 columns less the timing column): 「す。」 is not left alone. */
static void test_no_orphan(void **state)
{
	(void)state;
	const char *s = sentences[2];
	size_t len = strlen(s), next, cut = text_wrap_next(s, len, 37, &next);
	cut = text_wrap_next(s + next, len - next, 37, &next);
	(void)cut;
	assert_true(text_width(s + next, len - next) >= 0);
	size_t first = 0, n2;
	text_wrap_next(s, len, 37, &first);
	size_t second = text_wrap_next(s + first, len - first, 37, &n2);
	size_t rest = len - first - n2;
	/* either two lines, or a third line longer than 「す。」 */
	assert_true(rest == 0 || text_width(s + first + n2, rest) > 4);
	assert_true(second > 0);
}

/* The break falls between phrases where one is near: 「…自体が|収まっていません。」, not
 * 「…自体が収|まって」 (the review's line at 80 columns, 77 cells after the margin). */
static void test_phrase_break(void **state)
{
	(void)state;
	const char *s = "学習ステップ 6（最初の数ステップ）で VRAM が不足しました。"
			"1 ステップ自体が収まっていません。";
	size_t next, cut = text_wrap_next(s, strlen(s), 77, &next);
	assert_true(strncmp(s + next, "収まっていません。", strlen("収まっていません。")) == 0);
	assert_true(cut > 0);
	/* 「最大」 stays whole */
	s = "ほとんどのステップは収まりますが、最大のバケットや最長のクリップでときどき上限を超えます。";
	for (int w = 20; w <= 60; w++) {
		size_t len = strlen(s), p = 0;
		while (p < len) {
			cut = text_wrap_next(s + p, len - p, w, &next);
			assert_false(cut >= 3 && !strncmp(s + p + cut - 3, "最", 3));
			p += next;
		}
	}
}

/* s wrapped item by item at `width`, each line followed by '|'. */
static const char *items(const char *s, int width)
{
	static char out[512];
	size_t len = strlen(s), next, cut;

	out[0] = '\0';
	while (len) {
		cut = text_wrap_items(s, len, width, &next);
		assert_true(next > 0);
		strncat(out, s, cut);
		strcat(out, "|");
		s += next;
		len -= next;
	}
	return out;
}

/* A list in one cell: each item stays on one line when it fits on one. */
static void test_items(void **state)
{
	(void)state;
	size_t next, cut;
	const char *s;

	assert_string_equal(items("Low VRAM・量子化、最大バケット縮小、サンプル軽量化", 20),
			    "Low VRAM・量子化、|最大バケット縮小、|サンプル軽量化|");
	/* English: items end at ", " and "; " */
	assert_string_equal(items("low VRAM/quantize; smaller top bucket; lighter sampling", 26),
			    "low VRAM/quantize;|smaller top bucket;|lighter sampling|");
	/* The quit prompt at 60 columns (less the status row's margin): each "key = meaning" stays
	 * whole, and the line ends after an item's 「、」. */
	assert_string_equal(items("未保存の変更があります。終了しますか？ s = 保存して終了、"
				  "y = 保存せずに終了、n = 続ける", 59),
			    "未保存の変更があります。終了しますか？ s = 保存して終了、|"
			    "y = 保存せずに終了、n = 続ける|");
	/* an item wider than the line wraps as text */
	s = "ベースラインサンプルの軽量化または無効化、次に";
	cut = text_wrap_items(s, strlen(s), 20, &next);
	assert_true(cut > 0 && text_width(s, cut) <= 20);
}

static void test_tidy(void **state)
{
	(void)state;
	char s[256];
	snprintf(s, sizeof s, "%s", "保ってください。 train.steps を増やし、 次に。 English. Stays.");
	size_t n = text_tidy_spaces(s, strlen(s));
	s[n] = '\0';
	assert_string_equal(s, "保ってください。train.steps を増やし、次に。English. Stays.");
	snprintf(s, sizeof s, "%s", "終了しますか？ y = 保存");
	n = text_tidy_spaces(s, strlen(s));
	s[n] = '\0';
	assert_string_equal(s, "終了しますか？ y = 保存");
	snprintf(s, sizeof s, "%s", "end。 ");
	n = text_tidy_spaces(s, strlen(s));
	s[n] = '\0';
	assert_string_equal(s, "end。 ");
}

int main(void)
{
	setlocale(LC_ALL, "");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_review_sentences),
		cmocka_unit_test(test_katakana_moves_whole),
		cmocka_unit_test(test_no_orphan),
		cmocka_unit_test(test_phrase_break),
		cmocka_unit_test(test_items),
		cmocka_unit_test(test_tidy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* text.c — see text.h. Logs are untrusted: everything shown on a terminal goes through here. */
#include "oomfix/text.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

size_t text_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t v, min;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2; v = c & 0x1F; min = 0x80;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3; v = c & 0x0F; min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4; v = c & 0x07; min = 0x10000;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3F);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return n;
}

/* Length of the escape sequence starting at s[0] == ESC (the whole of it, so that none of its
 * parameter bytes leak out as text). An unterminated sequence runs to the end of the input. */
static size_t ansi_len(const unsigned char *s, size_t len)
{
	size_t i;

	if (len < 2)
		return len;
	if (s[1] == '[') { /* CSI: parameters and intermediates, then one final byte */
		for (i = 2; i < len; i++)
			if (s[i] >= 0x40 && s[i] <= 0x7E)
				return i + 1;
		return len;
	}
	if (s[1] == ']' || s[1] == 'P' || s[1] == '_' || s[1] == '^' || s[1] == 'X') {
		/* OSC, DCS, APC, PM, SOS: up to BEL or ST (ESC \) */
		for (i = 2; i < len; i++) {
			if (s[i] == 0x07)
				return i + 1;
			if (s[i] == 0x1B && i + 1 < len && s[i + 1] == '\\')
				return i + 2;
		}
		return len;
	}
	if (s[1] >= 0x20 && s[1] <= 0x2F) { /* nF: intermediates then a final byte */
		for (i = 2; i < len; i++)
			if (s[i] >= 0x30 && s[i] <= 0x7E)
				return i + 1;
		return len;
	}
	return 2; /* two-byte sequences such as ESC 7, ESC M */
}

size_t text_strip_ansi(char *s, size_t len)
{
	unsigned char *u = (unsigned char *)s;
	size_t r = 0, w = 0;
	const unsigned char *esc = memchr(u, 0x1B, len);

	if (!esc)
		return len;
	r = w = (size_t)(esc - u);
	while (r < len) {
		if (u[r] == 0x1B) {
			r += ansi_len(u + r, len - r);
			continue;
		}
		u[w++] = u[r++];
	}
	return w;
}

static const char hexd[] = "0123456789ABCDEF";

/* show_esc: ESC is shown as ^[ (and the rest of its sequence as text) instead of being dropped
 * with the whole sequence; show_tab: a TAB is shown as ^I instead of kept. */
static size_t sanitize(const char *in, size_t len, char *out, size_t outsz, bool show_esc,
		       bool show_tab)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t i = 0, w = 0;

	if (!out || outsz == 0)
		return 0;
	while (i < len) {
		unsigned char c = s[i];
		char tmp[16];
		size_t tn = 0, adv = 1;
		uint32_t cp;

		if (c == 0x1B && !show_esc) {
			i += ansi_len(s + i, len - i);
			continue;
		}
		if ((c == '\t' && !show_tab) || (c >= 0x20 && c < 0x7F)) {
			tmp[tn++] = (char)c;
		} else if (c < 0x20 || c == 0x7F) {
			tmp[tn++] = '^';
			tmp[tn++] = (char)(c == 0x7F ? '?' : c + '@');
		} else {
			size_t n = text_utf8_decode(s + i, len - i, &cp);
			if (n == 0 || (cp >= 0x80 && cp <= 0x9F)) {
				/* invalid byte, or a C1 control in its UTF-8 form: show the bytes */
				size_t k = n ? n : 1;
				for (size_t j = 0; j < k; j++) {
					tmp[tn++] = '\\';
					tmp[tn++] = 'x';
					tmp[tn++] = hexd[s[i + j] >> 4];
					tmp[tn++] = hexd[s[i + j] & 15];
				}
				adv = k;
			} else {
				memcpy(tmp, s + i, n);
				tn = n;
				adv = n;
			}
		}
		if (w + tn >= outsz)
			break; /* never split a character or an escape */
		memcpy(out + w, tmp, tn);
		w += tn;
		i += adv;
	}
	out[w] = '\0';
	return w;
}

size_t text_sanitize(const char *in, size_t len, char *out, size_t outsz)
{
	return sanitize(in, len, out, outsz, false, false);
}

size_t text_visible(const char *in, size_t len, char *out, size_t outsz)
{
	return sanitize(in, len, out, outsz, true, false);
}

size_t text_visible_cell(const char *in, size_t len, char *out, size_t outsz)
{
	return sanitize(in, len, out, outsz, true, true);
}

static int cp_width(uint32_t cp)
{
	int wd;

	if (cp < 0x20 || cp == 0x7F)
		return 1;
	wd = wcwidth((wchar_t)cp);
	if (wd < 0)
		return 1;
	return wd;
}

int text_width(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	int cells = 0;

	while (i < len) {
		uint32_t cp;
		size_t n = text_utf8_decode(u + i, len - i, &cp);
		if (n == 0) {
			cells += 1;
			i += 1;
			continue;
		}
		cells += cp_width(cp);
		i += n;
	}
	return cells;
}

size_t text_fit(const char *s, size_t len, int cells, int *used)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	int w = 0;

	while (i < len) {
		uint32_t cp;
		size_t n = text_utf8_decode(u + i, len - i, &cp);
		int cw = n ? cp_width(cp) : 1;
		if (n == 0)
			n = 1;
		if (w + cw > cells)
			break;
		w += cw;
		i += n;
	}
	if (used)
		*used = w;
	return i;
}

/* Characters that must not start a line (closing brackets, Japanese punctuation, small kana,
 * the long-vowel mark) or end one (opening brackets): the usual line-breaking rules (kinsoku). */
static bool no_line_start(uint32_t cp)
{
	static const uint32_t set[] = {
		0x3001, 0x3002, 0xFF0C, 0xFF0E, 0x30FB, 0xFF1A, 0xFF1B, 0xFF1F, 0xFF01, 0x30FC,
		0xFF09, 0x300D, 0x300F, 0x3011, 0x3015, 0x3009, 0x300B, 0x2019, 0x201D, 0x3005,
		0x3041, 0x3043, 0x3045, 0x3047, 0x3049, 0x3063, 0x3083, 0x3085, 0x3087, 0x308E,
		0x30A1, 0x30A3, 0x30A5, 0x30A7, 0x30A9, 0x30C3, 0x30E3, 0x30E5, 0x30E7, 0x30EE,
		0x30F5, 0x30F6, 0x309D, 0x309E, 0x30FD, 0x30FE, 0x2026, 0x2025,
	};
	if (cp < 0x80)
		return cp && strchr(",.;:!?)]}%", (int)cp);
	for (size_t i = 0; i < sizeof set / sizeof set[0]; i++)
		if (set[i] == cp)
			return true;
	return false;
}

static bool no_line_end(uint32_t cp)
{
	static const uint32_t set[] = { 0xFF08, 0x300C, 0x300E, 0x3010, 0x3014, 0x3008, 0x300A,
					0x2018, 0x201C };
	if (cp < 0x80)
		return cp && strchr("([{", (int)cp);
	for (size_t i = 0; i < sizeof set / sizeof set[0]; i++)
		if (set[i] == cp)
			return true;
	return false;
}

/* Line breaking. Written here rather than taken from libunibreak (UAX #14): Debian's
 * libunibreak-dev ships only a shared library (no libunibreak.a, which the static release build
 * and the fuzz script would need) and an old Unicode version, and UAX #14 itself breaks where this
 * program must not: between any two katakana (class ID), after the hyphens of --flags and the
 * slashes of paths. What is needed is small: the kinsoku sets above plus the rules below. */

static bool is_kata(uint32_t cp)
{
	return (cp >= 0x30A1 && cp <= 0x30FA) || cp == 0x30FC || cp == 0x30FD || cp == 0x30FE ||
	       (cp >= 0x31F0 && cp <= 0x31FF) || (cp >= 0xFF66 && cp <= 0xFF9F);
}

static bool is_digit(uint32_t cp)
{
	return (cp >= '0' && cp <= '9') || (cp >= 0xFF10 && cp <= 0xFF19);
}

/* Joins a number to what follows or precedes it: 1〜3, 2×2, 1024×1024. */
static bool is_num_joiner(uint32_t cp)
{
	return cp == 0x301C || cp == 0xFF5E || cp == 0x00D7 || cp == 0x2192;
}

/* A counter or unit that stays with the number before it, even across one space:
 * 「3 回」, 「1 つ」, 「2 倍」, 「500 ステップ」 (katakana is handled by the caller). */
static bool is_counter(uint32_t cp)
{
	static const uint32_t set[] = { 0x56DE, 0x4EF6, 0x679A, 0x79D2, 0x5206, 0x6642, 0x5272,
					0x500D, 0x500B, 0x884C, 0x6841, 0x65E5, 0x53F0, 0x3064,
					0x5EA6, 0x756A, 0x5217, 0x6B69, 0x4EBA, 0x30F6 };
	/* 回 件 枚 秒 分 時 割 倍 個 行 桁 日 台 つ 度 番 列 歩 人 ヶ */
	for (size_t i = 0; i < sizeof set / sizeof set[0]; i++)
		if (set[i] == cp)
			return true;
	return false;
}

/* An ASCII unit after a number and a space: "12.5 GiB", "30 s", "512 px". */
static bool ascii_unit_at(const char *s, size_t len)
{
	static const char *const units[] = { "GiB", "MiB", "KiB", "TiB", "GB", "MB", "KB", "kB",
					     "TB", "B", "px", "ms", "s", "min", "h", "%",
					     "steps", "step", "frames", "MB/s" };
	for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
		size_t n = strlen(units[k]);
		if (n <= len && memcmp(s, units[k], n) == 0 &&
		    (n == len || !((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
				   (s[n] >= '0' && s[n] <= '9') || s[n] == '_')))
			return true;
	}
	return false;
}

static uint32_t cp_at(const unsigned char *u, size_t len, size_t i, size_t *n)
{
	uint32_t cp = 0xFFFD;
	size_t k = text_utf8_decode(u + i, len - i, &cp);
	if (k == 0) {
		cp = 0xFFFD;
		k = 1;
	}
	if (n)
		*n = k;
	return cp;
}

/* May a line end at the space s[i] (and the next start after the spaces)? Not between a number
 * and its unit ("8 GiB", "3 回", "500 ステップ"), nor beside an arrow, a times sign or the = of a
 * key's meaning ("2 → 1", "y = save"), nor before closing punctuation. */
static bool space_breaks(const unsigned char *u, size_t len, size_t i, uint32_t before)
{
	size_t j = i, n;
	uint32_t after;

	while (j < len && u[j] == ' ')
		j++;
	if (j >= len)
		return true;
	after = cp_at(u, len, j, &n);
	if (before == 0x2192 || after == 0x2192 || before == 0x00D7 || after == 0x00D7 ||
	    before == '=' || after == '=')
		return false; /* "2 → 1", "y = save": one unit */
	if (no_line_start(after) && after >= 0x80)
		return false;
	if (is_digit(before) &&
	    (is_kata(after) || is_counter(after) || ascii_unit_at((const char *)u + j, len - j)))
		return false;
	return true;
}

/* May a line end between prev and cp (no space between them)? */
static bool may_break(uint32_t prev, int prev_w, uint32_t cp, int w)
{
	if (prev == ' ' || cp == ' ')
		return false;
	if (w != 2 && prev_w != 2)
		return false; /* inside an ASCII word, identifier, path or --flag */
	if (no_line_start(cp) || no_line_end(prev))
		return false;
	if (is_kata(prev) && is_kata(cp))
		return false; /* a katakana word: キャッシュ, ベースラインサンプル */
	if (is_digit(prev) && (w == 2 || is_num_joiner(cp)))
		return false; /* 500ステップ, 1つ, 2〜3割 */
	if (is_num_joiner(prev) && is_digit(cp))
		return false;
	return true;
}

static bool is_hira(uint32_t cp)
{
	return cp >= 0x3041 && cp <= 0x309F;
}

/* Is a break between prev and cp (where one is allowed) also between two phrases? After
 * punctuation, and after a run of hiragana (particles, okurigana) before kanji, katakana or
 * ASCII; not inside 「収まって」 (kanji then its kana) nor inside 「最大」 (two kanji). */
static bool good_break(uint32_t prev, uint32_t cp)
{
	if (prev == 0x3001 || prev == 0x3002 || prev == 0xFF0C || prev == 0xFF0E ||
	    prev == 0xFF09 || prev == 0x300D || prev == 0x300F || prev == 0x3011 ||
	    prev == 0xFF01 || prev == 0xFF1F || prev == 0x30FB)
		return true;
	if (is_hira(prev))
		return !is_hira(cp);
	if (prev < 0x80) /* an ASCII word, then Japanese: not before a particle */
		return !is_hira(cp);
	return cp < 0x80 || no_line_end(cp); /* Japanese, then ASCII or an opening bracket */
}

/* Width of s[0..len) without the closing punctuation at its end: how much of a short last line
 * is more than 「す。」. */
static int tail_cells(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	int cells = 0, upto = 0;

	while (i < len) {
		size_t n;
		uint32_t cp = cp_at(u, len, i, &n);
		if (cp == '\n' || cp == ' ')
			return 99; /* not one short last piece of a paragraph */
		cells += cp_width(cp);
		if (cells > 8)
			return 99; /* long: stop reading (a log line can be megabytes) */
		i += n;
		if (!no_line_start(cp))
			upto = cells;
	}
	return upto;
}

size_t text_wrap_next(const char *s, size_t len, int width, size_t *next)
{
	const unsigned char *u = (const unsigned char *)s;
	int used;
	size_t fit, cut = 0, cut2 = 0, i = 0;
	uint32_t prev = 0;
	int prev_w = 0;

	if (width < 1)
		width = 1;
	fit = text_fit(s, len, width, &used);
	if (fit >= len) {
		cut = len;
	} else {
		/* The last place up to `fit` where a line may end (and the one before it), and the
		 * last one that is also a good place: between two phrases rather than inside a word
		 * written in kanji and kana (「収/まって」, 「最/大」). */
		size_t good = 0;
		while (i <= fit && i < len) {
			size_t n;
			uint32_t cp = cp_at(u, len, i, &n);
			int w = cp_width(cp);
			bool ok = false;
			if (i > 0) {
				if (cp == ' ')
					ok = prev != ' ' && space_breaks(u, len, i, prev);
				else
					ok = may_break(prev, prev_w, cp, w);
			}
			if (ok) {
				cut2 = cut;
				cut = i;
				if (cp == ' ' || good_break(prev, cp))
					good = i;
			}
			prev = cp;
			prev_w = w;
			i += n;
		}
		if (good > 0 && good < cut && text_width(s, good) * 3 >= width * 2) {
			cut2 = 0; /* the piece moved down is a phrase: no orphan to mend */
			cut = good;
		}
		if (cut == 0) {
			/* No break allowed: cut where the cells run out, at least one character;
			 * an identifier after its last . / _ - [ ] there, if that keeps half the line. */
			cut = fit;
			for (size_t k = fit; k > 0 && text_width(s, k) * 2 >= width; k--)
				if (u[k - 1] > 0x20 && u[k - 1] < 0x80 && strchr("./_-[]", u[k - 1]) &&
				    u[k] > 0x20 && u[k] < 0x7F) {
					cut = k;
					break;
				}
			if (cut == 0) {
				cut = 1;
				while (cut < len && (u[cut] & 0xC0) == 0x80)
					cut++;
			}
		} else if (cut2 > 0 && u[cut] != ' ' && text_width(s, cut2) * 2 >= width &&
			   tail_cells(s + cut, len - cut) <= 2) {
			/* The rest would be an orphan such as 「す。」 or 「る」: take one more piece
			 * down with it. */
			cut = cut2;
		}
	}
	size_t nx = cut;
	while (nx < len && s[nx] == ' ')
		nx++;
	*next = nx;
	while (cut > 0 && s[cut - 1] == ' ' && nx < len)
		cut--; /* no trailing spaces on a line that was cut */
	return cut;
}

/* Is an item of a list over at s[i] (just after 「、」「・」「；」, or after ", " / "; ")? */
static size_t item_end_after(const unsigned char *u, size_t len, size_t i, uint32_t cp, size_t n)
{
	if (cp == 0x3001 || cp == 0x30FB || cp == 0xFF1B || cp == 0xFF0C)
		return i + n;
	if ((cp == ',' || cp == ';') && i + 1 < len && u[i + 1] == ' ')
		return i + 1;
	return 0;
}

size_t text_wrap_items(const char *s, size_t len, int width, size_t *next)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t cut = text_wrap_next(s, len, width, next), i = 0, best = 0;

	if (cut >= len || *next >= len)
		return cut;
	/* The last end of an item on this line; a line that holds no whole item breaks as text. */
	while (i < cut) {
		size_t n, e;
		uint32_t cp = cp_at(u, len, i, &n);
		e = item_end_after(u, len, i, cp, n);
		if (e && e <= cut && e < len)
			best = e;
		i += n;
	}
	/* ... unless that leaves the line a stub (a line that starts inside a long item and
	 * ends with its last few characters, as 「く、」). */
	if (best == 0 || best == cut || text_width(s, best) * 3 < width)
		return cut;
	size_t nx = best;
	while (nx < len && s[nx] == ' ')
		nx++;
	*next = nx;
	return best;
}

size_t text_tidy_spaces(char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t r = 0, w = 0;

	while (r < len) {
		size_t n;
		uint32_t cp = cp_at(u, len, r, &n);
		memmove(s + w, s + r, n);
		w += n;
		r += n;
		/* 。、）」』 then ASCII spaces then more text: the spaces go (after ？ and ！ a space
		 * is the custom: 「終了しますか？ y = 保存」) */
		if (cp == 0x3002 || cp == 0x3001 || cp == 0xFF09 || cp == 0x300D || cp == 0x300F) {
			size_t j = r;
			while (j < len && s[j] == ' ')
				j++;
			if (j > r && j < len && s[j] != '\n')
				r = j;
		}
	}
	return w;
}

/* The ASCII stand-in for one code point (at most as many bytes as its UTF-8 form). */
static const char *ascii_for(uint32_t cp)
{
	static const struct { uint32_t cp; const char *s; } map[] = {
		{ 0x00A0, " " }, { 0x00B7, "." }, { 0x00D7, "x" }, { 0x2010, "-" }, { 0x2011, "-" },
		{ 0x2012, "-" }, { 0x2013, "-" }, { 0x2014, "-" }, { 0x2015, "-" }, { 0x2018, "'" },
		{ 0x2019, "'" }, { 0x201C, "\"" }, { 0x201D, "\"" }, { 0x2022, "*" },
		{ 0x2026, "..." }, { 0x2190, "<-" }, { 0x2192, "->" }, { 0x2191, "^" },
		{ 0x2193, "v" }, { 0x2264, "<=" }, { 0x2265, ">=" }, { 0x2248, "~" },
		{ 0x2502, "|" }, { 0x2503, "|" }, { 0x2588, "#" }, { 0x3000, " " },
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (map[i].cp == cp)
			return map[i].s;
	if (cp >= 0x2580 && cp <= 0x259F)
		return cp == 0x2591 || cp == 0x2592 ? "." : "#"; /* blocks: progress bars */
	if (cp >= 0x2500 && cp <= 0x257F)
		return "-";                                          /* box drawing */
	return "?";
}

size_t text_ascii(char *s, size_t len)
{
	unsigned char *u = (unsigned char *)s;
	size_t r = 0, w = 0;

	while (r < len) {
		uint32_t cp;
		size_t n;
		if (u[r] < 0x80) {
			s[w++] = s[r++];
			continue;
		}
		n = text_utf8_decode(u + r, len - r, &cp);
		const char *a = n ? ascii_for(cp) : "?";
		size_t an = strlen(a);
		if (!n)
			n = 1;
		if (an > n)
			an = n; /* never grow: cannot happen with the table above */
		memcpy(s + w, a, an);
		w += an;
		r += n;
	}
	return w;
}

void text_cut_middle(const char *s, int cells, const char *mark, char *out, size_t size)
{
	size_t len = strlen(s);
	int used = 0;
	if (text_width(s, len) <= cells || cells < 3) {
		size_t n = text_fit(s, len, cells, &used);
		snprintf(out, size, "%.*s", (int)n, s);
		return;
	}
	int tail = (cells - 1) * 2 / 5, head = cells - 1 - tail;
	size_t h = text_fit(s, len, head, &used), t = h;
	while (t < len && text_width(s + t, len - t) > tail) {
		uint32_t cp;
		size_t k = text_utf8_decode((const unsigned char *)s + t, len - t, &cp);
		t += k ? k : 1;
	}
	snprintf(out, size, "%.*s%s%s", (int)h, s, mark, s + t);
}

void text_cut_apart(const char *s, const char *const *others, size_t n, int cells,
		    const char *mark, char *out, size_t size)
{
	text_cut_middle(s, cells, mark, out, size);
	const char *m = strstr(out, mark);
	if (!m || !*mark)
		return; /* not cut: nothing can read the same as it */
	/* Only another name with the same head can be cut the same way: the rest are passed over
	 * without cutting them, so a long list (a job list drawn on each key) costs a compare a
	 * name. */
	size_t head = (size_t)(m - out);
	size_t lcp = 0;       /* the longest prefix s shares with another one that reads the same */
	bool clash = false;
	for (size_t i = 0; i < n; i++) {
		if (!others[i] || others[i] == s || strncmp(others[i], s, head) || !strcmp(others[i], s))
			continue;
		char cut[512];
		text_cut_middle(others[i], cells, mark, cut, sizeof cut);
		if (strcmp(cut, out))
			continue;
		clash = true;
		size_t k = 0;
		while (s[k] && s[k] == others[i][k])
			k++;
		if (k > lcp)
			lcp = k;
	}
	if (!clash)
		return;
	int used = 0;
	/* the first differing character fits before the mark */
	size_t keep = text_fit(s, strlen(s), cells - 1, &used);
	if (lcp + 1 > keep)
		return;
	snprintf(out, size, "%.*s%s", (int)keep, s, mark);
}

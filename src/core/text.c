/* text.c — see text.h. Logs are untrusted: everything shown on a terminal goes through here. */
#include "oomfix/text.h"

#include <stdint.h>
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
 * with the whole sequence. */
static size_t sanitize(const char *in, size_t len, char *out, size_t outsz, bool show_esc)
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
		if (c == '\t' || (c >= 0x20 && c < 0x7F)) {
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
	return sanitize(in, len, out, outsz, false);
}

size_t text_visible(const char *in, size_t len, char *out, size_t outsz)
{
	return sanitize(in, len, out, outsz, true);
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

size_t text_wrap_next(const char *s, size_t len, int width, size_t *next)
{
	const unsigned char *u = (const unsigned char *)s;
	int used;
	size_t fit, cut = 0, i = 0;
	uint32_t prev = 0;
	int prev_w = 0;

	if (width < 1)
		width = 1;
	fit = text_fit(s, len, width, &used);
	if (fit >= len) {
		cut = len;
	} else {
		/* The last place up to `fit` where a line may end: at a space, or between two
		 * characters of which one is wide (Japanese has no spaces between words). */
		while (i <= fit) {
			uint32_t cp = 0;
			size_t n = i < len ? text_utf8_decode(u + i, len - i, &cp) : 0;
			int w = i < len ? (n ? cp_width(cp) : 1) : 0;
			if (i < len && n == 0)
				cp = 0xFFFD;
			if (i > 0 && i < len) {
				if (cp == ' ')
					cut = i;
				else if (prev != ' ' && (w == 2 || prev_w == 2) && !no_line_start(cp) &&
					 !no_line_end(prev))
					cut = i;
			}
			if (i >= len)
				break;
			prev = cp;
			prev_w = w;
			i += n ? n : 1;
		}
		if (cut == 0) {
			/* No break allowed: cut where the cells run out, at least one character. */
			cut = fit;
			if (cut == 0) {
				cut = 1;
				while (cut < len && (u[cut] & 0xC0) == 0x80)
					cut++;
			}
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

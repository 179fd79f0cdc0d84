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

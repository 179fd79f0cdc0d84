/* fuzz_text.c — text_sanitize, text_visible, text_strip_ansi, text_width and text_fit on
 * arbitrary bytes.
 *
 * What must hold for any input: the sanitised text cannot drive a terminal (no ESC, no C0 but
 * TAB, no DEL, no C1 in its UTF-8 form C2 80..C2 9F) and is valid UTF-8, and so is what
 * text_visible makes of it (escape sequences shown, for error messages); a smaller output buffer
 * gives a prefix of the full output (nothing is split); stripping ANSI leaves no ESC and never
 * grows the text; text_fit agrees with text_width. Wrapping (text_wrap_next, text_wrap_items)
 * always moves on, never past the end, never splits a character of valid UTF-8, and gives lines
 * within the width unless one character is wider; text_tidy_spaces never grows the text; a
 * name cut for a column (text_cut_middle, text_cut_apart) is never wider than it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oomfix/text.h"

#include "fuzz.h"

static void check_safe(const char *out, size_t n)
{
	const unsigned char *u = (const unsigned char *)out;

	for (size_t i = 0; i < n; i++) {
		FUZZ_CHECK(u[i] != 0x1B);
		FUZZ_CHECK(u[i] >= 0x20 || u[i] == '\t');
		FUZZ_CHECK(u[i] != 0x7F);
		if (u[i] == 0xC2 && i + 1 < n)
			FUZZ_CHECK(u[i + 1] < 0x80 || u[i + 1] > 0x9F);
	}
	FUZZ_CHECK(fuzz_utf8_valid(u, n));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	/* every input byte becomes at most 4 output bytes (\xNN) */
	size_t full_sz = size * 4 + 1;
	char *full = malloc(full_sz);
	char *small, *copy;
	size_t n, m, small_sz;

	if (!full)
		return 0;
	n = text_sanitize(in, size, full, full_sz);
	FUZZ_CHECK(n < full_sz);
	FUZZ_CHECK(full[n] == '\0');
	FUZZ_CHECK(strlen(full) == n);
	check_safe(full, n);

	/* A bounded buffer (its size taken from the input) holds a prefix of the full output. */
	small_sz = size ? (size_t)data[0] % 64 + 1 : 1;
	small = malloc(small_sz);
	if (small) {
		m = text_sanitize(in, size, small, small_sz);
		FUZZ_CHECK(m < small_sz);
		FUZZ_CHECK(small[m] == '\0');
		FUZZ_CHECK(m <= n && memcmp(small, full, m) == 0);
		check_safe(small, m);
		free(small);
	}
	FUZZ_CHECK(text_sanitize(in, size, NULL, 0) == 0);

	/* text_visible (job names in error messages): as safe, and a prefix when bounded; in a
	 * buffer of its own, so that what follows works on the sanitised text */
	char *shown = malloc(full_sz);
	if (shown) {
		m = text_visible(in, size, shown, full_sz);
		FUZZ_CHECK(m < full_sz && shown[m] == '\0');
		check_safe(shown, m);
		char vis[16];
		size_t k = text_visible(in, size, vis, sizeof vis);

		FUZZ_CHECK(k < sizeof vis && vis[k] == '\0' && k <= m && memcmp(vis, shown, k) == 0);
		check_safe(vis, k);
		free(shown);
	}

	copy = malloc(size + 1);
	if (copy) {
		if (size)
			memcpy(copy, in, size);
		m = text_strip_ansi(copy, size);
		FUZZ_CHECK(m <= size);
		FUZZ_CHECK(memchr(copy, 0x1B, m) == NULL);
		free(copy);
	}

	{
		int cells = size ? data[size - 1] % 100 : 0;
		int used = -1;
		int w = text_width(in, size);
		size_t fit = text_fit(in, size, cells, &used);

		FUZZ_CHECK(w >= 0);
		FUZZ_CHECK(fit <= size);
		FUZZ_CHECK(used >= 0 && used <= cells);
		FUZZ_CHECK(text_width(in, fit) == used);
		if (w <= cells)
			FUZZ_CHECK(fit == size && used == w);
	}

	/* Wrap the sanitised text (what callers wrap) at a width taken from the input. */
	for (int items = 0; items < 2; items++) {
		int width = size ? data[0] % 90 + 1 : 1;
		const char *p = full;
		size_t left = n;
		while (left) {
			size_t next = 0;
			size_t cut = items ? text_wrap_items(p, left, width, &next)
					   : text_wrap_next(p, left, width, &next);
			FUZZ_CHECK(next > 0 && next <= left && cut <= next);
			FUZZ_CHECK(cut == left || ((unsigned char)p[cut] & 0xC0) != 0x80);
			if (text_width(p, cut) > width) {
				uint32_t cp;
				FUZZ_CHECK(text_utf8_decode((const unsigned char *)p, cut, &cp) == cut);
			}
			p += next;
			left -= next;
		}
	}
	/* Names cut for a column (job names from a database): the sanitised text split at its
	 * tabs into up to four names, each cut for a width from the input, alone and apart from
	 * the others: never wider than the column, still valid UTF-8. */
	{
		size_t fl = strlen(full);
		char *names = malloc(fl + 1), *nm[4];
		size_t nn = 0;
		if (names) {
			memcpy(names, full, fl + 1);
			for (char *t = names; t && nn < 4; nn++) {
				nm[nn] = t;
				t = strchr(t, '\t');
				if (t)
					*t++ = '\0';
			}
			int cells = size > 1 ? data[1] % 70 : 0;
			for (size_t i = 0; i < nn; i++) {
				char cut[1024];
				text_cut_middle(nm[i], cells, "~", cut, sizeof cut);
				size_t cl = strlen(cut);
				bool whole = strlen(nm[i]) < sizeof cut - 8; /* not cut by the buffer */
				if (whole)
					FUZZ_CHECK(fuzz_utf8_valid((const unsigned char *)cut, cl) &&
						   text_width(cut, cl) <= cells);
				text_cut_apart(nm[i], (const char *const *)nm, nn, cells, "~", cut,
					       sizeof cut);
				cl = strlen(cut);
				if (whole)
					FUZZ_CHECK(fuzz_utf8_valid((const unsigned char *)cut, cl) &&
						   text_width(cut, cl) <= cells);
			}
			free(names);
		}
	}
	copy = malloc(n + 1);
	if (copy) {
		memcpy(copy, full, n + 1);
		m = text_tidy_spaces(copy, n);
		FUZZ_CHECK(m <= n);
		FUZZ_CHECK(fuzz_utf8_valid((const unsigned char *)copy, m));
		free(copy);
	}
	free(full);
	return 0;
}

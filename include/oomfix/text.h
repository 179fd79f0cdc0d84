/* text.h — making untrusted text (log lines, YAML values) safe and measurable for a terminal. */
#ifndef OOMFIX_TEXT_H
#define OOMFIX_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Copies `len` bytes of `in` into `out` (size outsz, always NUL-terminated) so that nothing can
 * drive a terminal: ANSI escape sequences (CSI, OSC, ...) are removed; other C0 controls but TAB,
 * DEL, and C1 controls (raw or UTF-8 encoded) are shown as ^X or \xNN; invalid UTF-8 bytes are
 * shown as \xNN. Returns the number of bytes written (without the NUL). */
size_t text_sanitize(const char *in, size_t len, char *out, size_t outsz);

/* Decodes one UTF-8 sequence at s[0..len): returns its length (1-4) and the code point in *cp,
 * or 0 when the bytes are not a valid, shortest-form, non-surrogate sequence up to U+10FFFF. */
size_t text_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp);

/* Like text_sanitize, but an escape sequence is shown, not removed: ESC becomes ^[ and the rest
 * of the sequence stays as visible text (for a log view or an error message, where the reader
 * should see that the text tried to drive the terminal). */
size_t text_visible(const char *in, size_t len, char *out, size_t outsz);

/* Like text_visible, and a TAB is shown as ^I too: for one cell of a table or one item of a list
 * of one item a line (a job's name), where a TAB would move what follows it. */
size_t text_visible_cell(const char *in, size_t len, char *out, size_t outsz);

/* Removes ANSI escape sequences only (for matching); returns the new length. In place. */
size_t text_strip_ansi(char *s, size_t len);

/* For a terminal without UTF-8 (LANG=C): replaces, in place, every non-ASCII character of valid
 * UTF-8 text with ASCII that means the same where there is one ("→" "->", "×" "x", "—" "-",
 * "…" "...", block and shade characters "#", box lines "-" and "|") and "?" otherwise. The text
 * never grows; returns the new length. */
size_t text_ascii(char *s, size_t len);

/* Display width in terminal cells of valid UTF-8 text (wcwidth; unprintable counts 1). */
int text_width(const char *s, size_t len);

/* The longest prefix of s (in bytes) that fits in `cells` cells; *used receives its width. */
size_t text_fit(const char *s, size_t len, int cells, int *used);

/* s (NUL-terminated, valid UTF-8) in at most `cells` cells into out: a longer one loses its
 * middle, marked by `mark` (one cell: "…", or "~" without UTF-8), so that the end, which tells
 * "..._v1" from "..._v2", stays. Below 3 cells it is cut at its end, unmarked. */
void text_cut_middle(const char *s, int cells, const char *mark, char *out, size_t size);

/* text_cut_middle, unless that would make s read as one of the `n` others cut the same way
 * (two long names that differ only in their middle): then s is cut at its end instead, so that
 * the character where it first differs from them stays, when it falls inside `cells`. */
void text_cut_apart(const char *s, const char *const *others, size_t n, int cells,
		    const char *mark, char *out, size_t size);

/* One line of word wrapping: how many bytes of s[0..len) go on a line of `width` cells (returned)
 * and where the next line starts (*next, past the spaces at the break). Breaks at spaces, and
 * between characters of Japanese text as Japanese allows: never inside a run of katakana (with
 * ー), an ASCII word or identifier (snake_case, a.b.c, paths, --flags), nor between a number and
 * its unit or counter (「500ステップ」, 「3 回」, "8 GiB", 「2〜3割」, "2 → 1"), nor around the = of
 * "y = save"; no 、。）」 at a
 * line's start and no （「 at its end (kinsoku); a last line of only 「す。」 or 「る」 takes one
 * more piece down with it. A word wider than the line is cut where the cells run out. */
size_t text_wrap_next(const char *s, size_t len, int width, size_t *next);

/* Like text_wrap_next for a list written in one line (items ending in 「、」「・」「；」 or ", " /
 * "; "): the line ends after the last item that fits whole, so no item is split over two lines
 * unless it alone is wider than the line (then it wraps as text) or the line would be left with
 * less than a third of its width. For table cells and lists of changes. */
size_t text_wrap_items(const char *s, size_t len, int width, size_t *next);

/* Removes, in place, the ASCII spaces after 。、）」』 (「。 」 → 「。」, as when two translated
 * sentences are joined with a space) unless they end the text or a line; a space after ？ or ！
 * stays.
 * English text is unchanged. Returns the new length. */
size_t text_tidy_spaces(char *s, size_t len);

#endif

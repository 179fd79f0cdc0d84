/* buf.h — growing things: a byte string, an array's capacity, a whole file. One copy of the
 * doubling-and-overflow arithmetic, so that no caller writes `cap * 2` by hand again. */
#ifndef OOMFIX_BUF_H
#define OOMFIX_BUF_H

#include <stdbool.h>
#include <stddef.h>

/* A growing, always NUL-terminated byte string. Zero-initialise it ({0}); `p` is NULL until the
 * first append. An allocation failure sets `oom`, which sticks: later appends do nothing, so a
 * writer appends freely and checks once at the end. */
struct strbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

/* Appends n bytes of s (s may hold NULs). */
void strbuf_add(struct strbuf *b, const char *s, size_t n);
/* Appends a C string. */
void strbuf_adds(struct strbuf *b, const char *s);
/* Appends printf-formatted text. */
void strbuf_addf(struct strbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Hands the text to the caller (malloc'd, NUL-terminated, "" when nothing was added; its length
 * in *len when len is not NULL) and leaves b empty. Returns NULL, and frees what there was, when
 * an allocation failed on the way. */
char *strbuf_steal(struct strbuf *b, size_t *len);

/* Frees the text and leaves b empty (an embedded value: the struct itself is not freed). */
void strbuf_free(struct strbuf *b);

/* Makes room for at least `need` elements of `size` bytes in the array *pp of capacity *cap,
 * doubling (from 8) as needed. Returns false, and leaves *pp and *cap untouched, when the size
 * would overflow or memory runs out. Use ARRAY_GROW, which checks the types. */
bool array_grow(void *pp, size_t *cap, size_t need, size_t size);

/* True when the array p (of capacity cap, a size_t) has room for n elements, growing it if
 * needed; false when it could not grow (p still valid, nothing lost). Typical use:
 *     if (!ARRAY_GROW(v->p, v->n + 1, v->cap)) return false;
 *     v->p[v->n++] = x;
 * n is evaluated twice: no side effects in it. */
#define ARRAY_GROW(p, n, cap) ((n) <= (cap) || array_grow(&(p), &(cap), (n), sizeof *(p)))

/* Reads fd to its end into *out (malloc'd, NUL-terminated; length in *len). A regular file is
 * read in one allocation of its size. Refuses more than `max` bytes: reads at most max + 1, and
 * then returns EFBIG with *out holding the first `max` bytes (a caller that wants only a prefix
 * may keep it; anyone else frees it). Returns 0, or an errno value (ENOMEM, or read's error; then
 * *out is NULL). Retries EINTR; the fd is neither closed nor rewound. */
int read_all(int fd, size_t max, char **out, size_t *len);

#endif

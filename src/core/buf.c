/* buf.c — see buf.h. */
#include "oomfix/buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool array_grow(void *pp, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return true;
	size_t c = *cap ? *cap : 8;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			return false;
		c *= 2;
	}
	if (size && c > SIZE_MAX / size)
		return false;
	/* pp points at some `T *`; every object pointer has void *'s representation here, and
	 * memcpy keeps this clear of the aliasing rules. */
	void *old;
	memcpy(&old, pp, sizeof old);
	void *p = realloc(old, c * size);
	if (!p)
		return false;
	memcpy(pp, &p, sizeof p);
	*cap = c;
	return true;
}

/* Room for n more bytes and the NUL. */
static bool strbuf_room(struct strbuf *b, size_t n)
{
	if (b->oom)
		return false;
	if (n > SIZE_MAX - b->len - 1 || !ARRAY_GROW(b->p, b->len + n + 1, b->cap)) {
		b->oom = true;
		return false;
	}
	return true;
}

void strbuf_add(struct strbuf *b, const char *s, size_t n)
{
	if (!strbuf_room(b, n))
		return;
	if (n)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void strbuf_adds(struct strbuf *b, const char *s)
{
	strbuf_add(b, s, strlen(s));
}

void strbuf_addf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if (!strbuf_room(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *strbuf_steal(struct strbuf *b, size_t *len)
{
	if (!b->oom && !b->p)
		strbuf_add(b, "", 0);
	char *p = b->oom ? NULL : b->p;
	if (!p)
		free(b->p);
	if (len)
		*len = p ? b->len : 0;
	*b = (struct strbuf){ 0 };
	return p;
}

void strbuf_free(struct strbuf *b)
{
	free(b->p);
	*b = (struct strbuf){ 0 };
}

int read_all(int fd, size_t max, char **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	struct stat st;
	if (max > SIZE_MAX / 2 - 2)
		max = SIZE_MAX / 2 - 2;
	size_t want = max + 1; /* reading one byte past the limit tells a file over it */
	size_t cap = 4096;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 &&
	    (uintmax_t)st.st_size < want)
		cap = (size_t)st.st_size + 2; /* the file, one byte to see its end, the NUL */
	if (cap > want + 1)
		cap = want + 1;
	char *buf = malloc(cap);
	if (!buf)
		return ENOMEM;
	size_t n = 0;
	for (;;) {
		if (n == want)
			break;
		if (n + 1 >= cap) {
			size_t c = cap > (want + 1) / 2 ? want + 1 : cap * 2;
			char *nb = realloc(buf, c);
			if (!nb) {
				free(buf);
				return ENOMEM;
			}
			buf = nb;
			cap = c;
		}
		size_t room = cap - n - 1;
		if (room > want - n)
			room = want - n;
		ssize_t r = read(fd, buf + n, room);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int saved = errno;
			free(buf);
			return saved;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	int rc = 0;
	if (n > max) {
		n = max;
		rc = EFBIG;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return rc;
}

/* logidx.c — see logidx.h. Reads with pread (never mmap: a log truncated under a mapping
 * would SIGBUS), finds lines with memchr and keeps a bounded sparse index. */
#include "oomfix/logidx.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oomfix/i18n.h"

struct logidx {
	char *name;
	int fd;              /* -1 for a buffer */
	bool own_fd;
	bool stream;
	bool stream_used;    /* a stream can be read once */
	const char *mem;     /* buffer mode */
	uint64_t size;       /* visible bytes (regular file / buffer); bytes read for a stream */
	bool truncated;
	size_t cap;
	char *chunk;         /* LOGIDX_CHUNK bytes, allocated on first use */

	/* sparse index: ck[i] is the offset of line i * stride + 1 */
	uint64_t *ck;
	size_t nck;
	uint64_t stride;
	uint64_t idx_off;    /* newlines are counted in [0, idx_off) */
	uint64_t idx_nl;     /* how many */
	uint64_t scan_lines; /* physical lines found by the last complete scan */
	bool scanned;
};

static int open_fail(struct err *e, const char *path, int errnum)
{
	return err_set(e, ERR_NOINPUT, path, 0, 0, _("cannot open the log: %s"), strerror(errnum));
}

static struct logidx *new_li(const char *name)
{
	struct logidx *li = calloc(1, sizeof *li);
	if (!li)
		return NULL;
	li->name = strdup(name ? name : "");
	li->ck = malloc(LOGIDX_MAX_CHECKPOINTS * sizeof *li->ck);
	if (!li->name || !li->ck) {
		free(li->name);
		free(li->ck);
		free(li);
		return NULL;
	}
	li->fd = -1;
	li->cap = LOGIDX_SEG_CAP;
	li->stride = LOGIDX_FIRST_STRIDE;
	li->ck[0] = 0; /* line 1 starts at offset 0 */
	li->nck = 1;
	return li;
}

int logidx_open(const char *path, struct logidx **out, struct err *e)
{
	struct stat st;
	struct logidx *li;
	int fd;

	*out = NULL;
	if (!path || !*path)
		return err_set(e, ERR_NOINPUT, NULL, 0, 0, _("no log file given"));
	if (!strcmp(path, "-")) {
		fd = STDIN_FILENO;
	} else {
		/* A FIFO is opened the way cat(1) does, waiting for its writer: opening it without
		 * waiting and again later could drop what a quick writer already wrote and closed.
		 * Anything else is opened without blocking (a device), then made blocking below. */
		struct stat pst;
		bool fifo = stat(path, &pst) == 0 && S_ISFIFO(pst.st_mode);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | (fifo ? 0 : O_NONBLOCK));
		if (fd < 0)
			return open_fail(e, path, errno);
	}
	if (fstat(fd, &st) != 0) {
		int en = errno;
		if (fd != STDIN_FILENO)
			close(fd);
		return open_fail(e, path, en);
	}
	if (S_ISDIR(st.st_mode)) {
		if (fd != STDIN_FILENO)
			close(fd);
		return err_set(e, ERR_NOINPUT, path, 0, 0,
			       _("is a directory, not a log file"));
	}
	if (fd != STDIN_FILENO) {
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0 && (fl & O_NONBLOCK))
			fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	}
	li = new_li(!strcmp(path, "-") ? _("(standard input)") : path);
	if (!li) {
		if (fd != STDIN_FILENO)
			close(fd);
		return err_set(e, ERR_SOFTWARE, path, 0, 0, _("out of memory"));
	}
	li->fd = fd;
	li->own_fd = fd != STDIN_FILENO;
	li->stream = !S_ISREG(st.st_mode);
	li->size = li->stream ? 0 : (uint64_t)st.st_size;
	*out = li;
	return ERR_OK;
}

int logidx_open_buffer(const char *name, const char *buf, size_t len, struct logidx **out,
		       struct err *e)
{
	struct logidx *li = new_li(name ? name : "(buffer)");

	*out = NULL;
	if (!li)
		return err_set(e, ERR_SOFTWARE, name, 0, 0, _("out of memory"));
	li->mem = buf ? buf : "";
	li->size = buf ? len : 0;
	*out = li;
	return ERR_OK;
}

void logidx_close(struct logidx **pli)
{
	struct logidx *li;

	if (!pli || !*pli)
		return;
	li = *pli;
	if (li->own_fd && li->fd >= 0)
		close(li->fd);
	free(li->chunk);
	free(li->ck);
	free(li->name);
	free(li);
	*pli = NULL;
}

void logidx_set_seg_cap(struct logidx *li, size_t cap)
{
	li->cap = cap < 16 ? 16 : cap;
}

uint64_t logidx_size(const struct logidx *li) { return li->size; }
bool logidx_is_stream(const struct logidx *li) { return li->stream; }
bool logidx_truncated(const struct logidx *li) { return li->truncated; }
const char *logidx_name(const struct logidx *li) { return li->name; }

size_t logidx_checkpoints(const struct logidx *li, uint64_t *stride)
{
	if (stride)
		*stride = li->stride;
	return li->nck;
}

bool logidx_refresh(struct logidx *li)
{
	struct stat st;

	if (li->stream || li->fd < 0 || fstat(li->fd, &st) != 0)
		return false;
	if ((uint64_t)st.st_size < li->size) {
		li->truncated = true;
		return false;
	}
	if ((uint64_t)st.st_size > li->size) {
		li->size = (uint64_t)st.st_size;
		return true;
	}
	return false;
}

/* Reads up to n bytes at off (regular file or buffer). Returns bytes read; 0 at the end or when
 * the file became shorter than we thought (then `truncated` is set); -1 on error. */
static ssize_t read_at(struct logidx *li, uint64_t off, char *buf, size_t n)
{
	if (off >= li->size)
		return 0;
	if (n > li->size - off)
		n = (size_t)(li->size - off);
	if (li->mem) {
		memcpy(buf, li->mem + off, n);
		return (ssize_t)n;
	}
	for (;;) {
		ssize_t r = pread(li->fd, buf, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			li->truncated = true;
		return r;
	}
}

static ssize_t read_stream(struct logidx *li, char *buf, size_t n)
{
	for (;;) {
		ssize_t r = read(li->fd, buf, n);
		if (r < 0 && errno == EINTR)
			continue;
		return r;
	}
}

static bool ensure_chunk(struct logidx *li)
{
	if (!li->chunk)
		li->chunk = malloc(LOGIDX_CHUNK);
	return li->chunk != NULL;
}

/* Records that line `nl + 1` (after `nl` newlines) starts at `off`. */
static void note_line(struct logidx *li, uint64_t nl, uint64_t off)
{
	if (nl % li->stride != 0 || nl / li->stride != li->nck)
		return;
	if (li->nck == LOGIDX_MAX_CHECKPOINTS) {
		/* full: keep every other checkpoint and double the stride */
		size_t k = 0;
		for (size_t i = 0; i < li->nck; i += 2)
			li->ck[k++] = li->ck[i];
		li->nck = k;
		li->stride *= 2;
		if (nl % li->stride != 0 || nl / li->stride != li->nck)
			return;
	}
	li->ck[li->nck++] = off;
}

/* Counts newlines up to `upto` bytes (or the end), extending the index. */
static int index_to(struct logidx *li, uint64_t upto, struct err *e)
{
	if (li->stream)
		return ERR_OK;
	if (!ensure_chunk(li))
		return err_set(e, ERR_SOFTWARE, li->name, 0, 0, _("out of memory"));
	while (li->idx_off < li->size && li->idx_off < upto) {
		ssize_t r = read_at(li, li->idx_off, li->chunk, LOGIDX_CHUNK);
		const char *p, *end;
		if (r < 0)
			return err_set(e, ERR_IOERR, li->name, 0, 0, _("read error: %s"),
				       strerror(errno));
		if (r == 0) {
			li->size = li->idx_off; /* shrank under us */
			break;
		}
		p = li->chunk;
		end = p + r;
		while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
			p++;
			li->idx_nl++;
			note_line(li, li->idx_nl, li->idx_off + (uint64_t)(p - li->chunk));
		}
		li->idx_off += (uint64_t)r;
	}
	return ERR_OK;
}

void logidx_index_bytes(struct logidx *li, uint64_t off, const char *buf, size_t n)
{
	const char *p = buf, *end = buf + n;

	if (li->stream || off != li->idx_off)
		return;
	while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		p++;
		li->idx_nl++;
		note_line(li, li->idx_nl, off + (uint64_t)(p - buf));
	}
	li->idx_off += n;
	if (li->idx_off > li->size)
		li->size = li->idx_off; /* the file has at least the bytes just read */
}

int logidx_count_lines(struct logidx *li, uint64_t *lines, struct err *e)
{
	int rc;
	char last = '\n';

	*lines = 0;
	if (li->stream && !li->stream_used)
		return err_set(e, ERR_USAGE, li->name, 0, 0,
			       _("a pipe can only be read once; scan it first"));
	if (li->stream || li->scanned) {
		*lines = li->scan_lines;
		if (li->stream || li->idx_off >= li->size)
			return ERR_OK;
	}
	rc = index_to(li, UINT64_MAX, e);
	if (rc)
		return rc;
	if (li->size == 0)
		return ERR_OK;
	if (read_at(li, li->size - 1, &last, 1) != 1)
		last = '\n';
	*lines = li->idx_nl + (last != '\n' ? 1 : 0);
	return ERR_OK;
}

int logidx_read_line(struct logidx *li, uint64_t line, char *buf, size_t bufsz, size_t *len,
		     bool *clipped, uint64_t *offp, struct err *e)
{
	char tmp[65536];
	uint64_t off, cur, nl_needed;
	size_t w = 0;
	bool found_start = false, ended = false, clip = false;
	uint64_t start = 0;
	int rc;

	if (len)
		*len = 0;
	if (clipped)
		*clipped = false;
	if (bufsz)
		buf[0] = '\0';
	if (li->stream)
		return err_set(e, ERR_USAGE, li->name, 0, 0,
			       _("lines of a pipe cannot be read again"));
	if (line == 0)
		return err_set(e, ERR_DATA, li->name, 0, 0, _("line numbers start at 1"));
	/* the index must reach the line's start: count newlines until it does */
	nl_needed = line - 1;
	while (li->idx_nl < nl_needed && li->idx_off < li->size) {
		rc = index_to(li, li->idx_off + LOGIDX_CHUNK, e);
		if (rc)
			return rc;
	}
	{
		uint64_t k = nl_needed / li->stride;
		if (k >= li->nck)
			k = li->nck - 1;
		off = li->ck[k];
		cur = k * li->stride; /* newlines before `off` */
	}
	/* walk from the checkpoint to the line, then copy it */
	while (!ended) {
		ssize_t r = read_at(li, off, tmp, sizeof tmp);
		const char *p = tmp, *end;
		if (r < 0)
			return err_set(e, ERR_IOERR, li->name, 0, 0, _("read error: %s"),
				       strerror(errno));
		if (r == 0)
			break;
		end = tmp + r;
		while (!found_start) {
			if (cur == nl_needed) {
				found_start = true;
				start = off + (uint64_t)(p - tmp);
				break;
			}
			p = memchr(p, '\n', (size_t)(end - p));
			if (!p)
				break;
			p++;
			cur++;
		}
		if (found_start) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			const char *stop = nl ? nl : end;
			size_t n = (size_t)(stop - p);
			if (bufsz && w < bufsz - 1) {
				size_t room = bufsz - 1 - w;
				if (n > room) {
					n = room;
					clip = true;
				}
				memcpy(buf + w, p, n);
				w += n;
			} else if (n) {
				clip = true;
			}
			if (nl || clip)
				ended = true;
		}
		off += (uint64_t)r;
	}
	if (!found_start || (start >= li->size && w == 0))
		return err_set(e, ERR_DATA, li->name, 0, 0, _("the log has no line %llu"),
			       (unsigned long long)line);
	if (w > 0 && buf[w - 1] == '\r' && !clip)
		w--; /* CRLF ending */
	if (clipped)
		*clipped = clip;
	if (offp)
		*offp = start;
	if (bufsz)
		buf[w] = '\0';
	if (len)
		*len = w;
	return ERR_OK;
}

/* ---- the scan ---- */

/* The scan's state between two pieces of the log: a log can be scanned in one go (logidx_scan)
 * or fed as it grows (logidx_scanner_feed); the segments handed over depend only on the bytes,
 * never on where the pieces were cut. */
struct logidx_scanner {
	struct logidx *li;     /* fills li's index when set */
	logidx_seg_fn fn;
	void *ctx;
	int rc;
	uint64_t fed;          /* bytes fed so far */
	uint64_t line;
	uint64_t line_off;
	uint64_t nl;           /* newlines seen */
	unsigned seg;          /* segments handed over for this line */
	bool line_has_bytes;   /* bytes since the line started */
	size_t cap;
	char *pend;            /* a segment that spans pieces, at most cap bytes */
	size_t plen;
	uint64_t pend_off;
};

static void deliver(struct logidx_scanner *s, const char *p, size_t n, uint64_t off, bool piece)
{
	struct logidx_seg seg;

	if (s->rc)
		return;
	seg.p = p;
	seg.len = n;
	seg.line = s->line;
	seg.line_off = s->line_off;
	seg.off = off;
	seg.seg = s->seg++;
	seg.piece = piece;
	s->rc = s->fn(&seg, s->ctx);
}

/* Adds n bytes of the current segment; `complete` when a separator follows them. */
static void add_bytes(struct logidx_scanner *s, const char *p, size_t n, uint64_t off,
		      bool complete)
{
	size_t cap = s->cap;

	if (s->plen == 0 && complete) {
		while (n > cap) {
			deliver(s, p, cap, off, true);
			p += cap;
			n -= cap;
			off += cap;
		}
		if (n > 0)
			deliver(s, p, n, off, false);
		return;
	}
	while (n > 0) {
		size_t take;
		/* a full segment buffer with more bytes after it is a piece; one followed by its
		 * separator (maybe in a later call) is whole: wherever the reads were cut */
		if (s->plen == cap) {
			deliver(s, s->pend, s->plen, s->pend_off, true);
			s->plen = 0;
		}
		take = cap - s->plen;
		if (take > n)
			take = n;
		if (s->plen == 0)
			s->pend_off = off;
		memcpy(s->pend + s->plen, p, take);
		s->plen += take;
		p += take;
		n -= take;
		off += take;
	}
	if (complete && s->plen > 0) {
		deliver(s, s->pend, s->plen, s->pend_off, false);
		s->plen = 0;
	}
}

static void end_line(struct logidx_scanner *s, uint64_t next_off)
{
	if (s->seg == 0)
		deliver(s, "", 0, s->line_off, false); /* a line with no text */
	s->line++;
	s->line_off = next_off;
	s->seg = 0;
	s->line_has_bytes = false;
}

/* Splits one piece at '\n' and '\r'. `base` is the offset of buf[0]. */
static void scan_buf(struct logidx_scanner *s, const char *buf, size_t n, uint64_t base)
{
	const char *p = buf, *end = buf + n;

	while (p < end && !s->rc) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *lend = nl ? nl : end;
		const char *q = p;

		if (lend > p)
			s->line_has_bytes = true;
		while (q < lend && !s->rc) {
			const char *cr = memchr(q, '\r', (size_t)(lend - q));
			const char *send = cr ? cr : lend;
			add_bytes(s, q, (size_t)(send - q), base + (uint64_t)(q - buf),
				  cr != NULL || nl != NULL);
			q = cr ? cr + 1 : lend;
		}
		if (!nl)
			break;
		if (s->plen > 0) { /* a segment that started in an earlier piece ends here */
			deliver(s, s->pend, s->plen, s->pend_off, false);
			s->plen = 0;
		}
		s->nl++;
		p = nl + 1;
		if (s->li)
			note_line(s->li, s->nl, base + (uint64_t)(p - buf));
		end_line(s, base + (uint64_t)(p - buf));
	}
}

int logidx_scanner_new(size_t cap, struct logidx_scanner **out)
{
	struct logidx_scanner *s = calloc(1, sizeof *s);

	*out = NULL;
	if (!s)
		return ERR_SOFTWARE;
	s->cap = cap < 16 ? 16 : cap;
	s->pend = malloc(s->cap);
	if (!s->pend) {
		free(s);
		return ERR_SOFTWARE;
	}
	s->line = 1;
	*out = s;
	return ERR_OK;
}

void logidx_scanner_free(struct logidx_scanner **ps)
{
	if (!ps || !*ps)
		return;
	free((*ps)->pend);
	free(*ps);
	*ps = NULL;
}

int logidx_scanner_feed(struct logidx_scanner *s, const char *buf, size_t n, logidx_seg_fn fn,
			void *ctx)
{
	if (s->rc)
		return s->rc;
	s->fn = fn;
	s->ctx = ctx;
	scan_buf(s, buf, n, s->fed);
	s->fed += n;
	return s->rc;
}

/* What the end of the log does: the last segment and the last line, which has no '\n'. */
static void finish(struct logidx_scanner *s)
{
	if (s->rc || !(s->line_has_bytes || s->plen > 0))
		return;
	if (s->plen > 0) {
		deliver(s, s->pend, s->plen, s->pend_off, false);
		s->plen = 0;
	}
	end_line(s, s->fed);
}

int logidx_scanner_tail(const struct logidx_scanner *s, logidx_seg_fn fn, void *ctx)
{
	struct logidx_scanner copy = *s; /* pend is only read */

	if (s->rc)
		return s->rc;
	copy.li = NULL;
	copy.fn = fn;
	copy.ctx = ctx;
	finish(&copy);
	return copy.rc;
}

int logidx_scanner_end(struct logidx_scanner *s, logidx_seg_fn fn, void *ctx)
{
	if (s->rc)
		return s->rc;
	s->fn = fn;
	s->ctx = ctx;
	finish(s);
	return s->rc;
}

uint64_t logidx_scanner_offset(const struct logidx_scanner *s) { return s->fed; }

uint64_t logidx_scanner_lines(const struct logidx_scanner *s)
{
	return s->line - 1 + ((s->line_has_bytes || s->plen > 0) ? 1 : 0);
}

int logidx_scan(struct logidx *li, logidx_seg_fn fn, void *ctx, struct err *e)
{
	struct logidx_scanner *s;
	uint64_t off = 0;
	int rc = ERR_OK, src;
	bool indexing = li->idx_off == 0;

	if (li->stream && li->stream_used)
		return err_set(e, ERR_USAGE, li->name, 0, 0,
			       _("a pipe can only be read once"));
	if (!ensure_chunk(li) || logidx_scanner_new(li->cap, &s) != ERR_OK)
		return err_set(e, ERR_SOFTWARE, li->name, 0, 0, _("out of memory"));
	if (indexing)
		s->li = li;
	li->stream_used = li->stream;

	while (!s->rc) {
		ssize_t r = li->stream ? read_stream(li, li->chunk, LOGIDX_CHUNK)
				       : read_at(li, off, li->chunk, LOGIDX_CHUNK);
		if (r < 0) {
			rc = err_set(e, ERR_IOERR, li->name, 0, 0, _("read error: %s"),
				     strerror(errno));
			break;
		}
		if (r == 0)
			break;
		logidx_scanner_feed(s, li->chunk, (size_t)r, fn, ctx);
		off += (uint64_t)r;
	}
	if (!rc)
		logidx_scanner_end(s, fn, ctx);
	src = s->rc;
	if (li->stream || li->truncated)
		li->size = off;
	if (indexing && !rc && !src) {
		li->idx_off = off;
		li->idx_nl = s->nl;
	}
	if (!rc && !src) {
		li->scan_lines = s->line - 1;
		li->scanned = true;
	}
	logidx_scanner_free(&s);
	if (rc)
		return rc;
	return src;
}

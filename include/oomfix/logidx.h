/* logidx.h — reading a trainer log of any size: a streaming scan over lines and their `\r`
 * segments, and a sparse line index for jumping to any line.
 *
 * Regular files are read with pread(2) in large chunks, only up to the size stat'ed at open
 * (a log that grows is read as it was; one truncated while open ends the read early and sets
 * `truncated` — it can never SIGBUS us the way an mmap would). Pipes, FIFOs and "-" (stdin)
 * are read as a stream: they can be scanned once, but not read by line number.
 *
 * A physical line ends at '\n' (a final line without one counts). '\r' splits a line into
 * segments, as a terminal would redraw it (tqdm frames); the '\r' of a CRLF ending does not make
 * an extra segment. Empty segments are skipped, except that a line with no text yields one empty
 * segment. A segment longer than the cap is handed over in pieces of at most `cap` bytes, so a
 * 2 GB line with no newline never needs more than `cap` bytes of memory.
 *
 * The index keeps the offset of one line in every `stride` lines; when it holds
 * LOGIDX_MAX_CHECKPOINTS entries every other one is dropped and the stride doubles, so its
 * memory is bounded whatever the size of the log.
 */
#ifndef OOMFIX_LOGIDX_H
#define OOMFIX_LOGIDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oomfix/err.h"

#define LOGIDX_CHUNK (1u << 16)               /* bytes per read */
#define LOGIDX_SEG_CAP (64u * 1024)           /* default longest segment handed over whole */
#define LOGIDX_MAX_CHECKPOINTS 8192u          /* the sparse index never holds more */
#define LOGIDX_FIRST_STRIDE 256u              /* lines per checkpoint until the index fills */

struct logidx;

/* One `\r` segment (or a piece of one) handed to a scan callback. */
struct logidx_seg {
	const char *p;       /* the bytes, without '\r' or '\n'; valid only during the callback */
	size_t len;
	uint64_t line;       /* 1-based physical line */
	uint64_t line_off;   /* byte offset where the physical line starts */
	uint64_t off;        /* byte offset of these bytes */
	unsigned seg;        /* 0 for the first segment handed over for this line, then 1, 2, ... */
	bool piece;          /* cut at the cap: the same segment goes on in the next call */
};

/* Return 0 to go on, anything else to stop the scan (logidx_scan then returns that value). */
typedef int (*logidx_seg_fn)(const struct logidx_seg *s, void *ctx);

/* Opens a log ("-" = stdin). ERR_NOINPUT (with the reason) for a missing file, a directory or
 * one that cannot be read. The caller frees *out with logidx_close. */
int logidx_open(const char *path, struct logidx **out, struct err *e);

/* Opens a log over `len` bytes in memory (not copied: buf must outlive the logidx). */
int logidx_open_buffer(const char *name, const char *buf, size_t len, struct logidx **out,
		       struct err *e);

/* Closes the log and frees everything; sets *li to NULL. Safe on NULL. */
void logidx_close(struct logidx **li);

/* Sets the segment cap (bytes, at least 16) before a scan; tests use a small one. */
void logidx_set_seg_cap(struct logidx *li, size_t cap);

/* Calls fn for every segment from the start of the log, in order. Also fills the sparse index.
 * Returns ERR_OK, ERR_IOERR (read failed) or the callback's non-zero value. A stream can be
 * scanned once (ERR_USAGE the second time). */
int logidx_scan(struct logidx *li, logidx_seg_fn fn, void *ctx, struct err *e);

/* A scan fed by the caller piece by piece, for a log that grows: the segments handed over are
 * the same as logidx_scan's over the whole, wherever the pieces were cut (mid-line, mid-frame,
 * mid-character). A segment is handed over when its separator arrives; the bytes after the
 * last separator wait for the next piece (only pieces of a segment longer than the cap go out
 * before). The caller owns the scanner (logidx_scanner_free). */
struct logidx_scanner;

/* ERR_OK, or ERR_SOFTWARE when out of memory. cap: as logidx_set_seg_cap. */
int logidx_scanner_new(size_t cap, struct logidx_scanner **out);
void logidx_scanner_free(struct logidx_scanner **s);

/* Scans n more bytes, calling fn for every segment they complete. Returns 0 or fn's non-zero
 * value (the scanner then stays stopped). */
int logidx_scanner_feed(struct logidx_scanner *s, const char *buf, size_t n, logidx_seg_fn fn,
			void *ctx);

/* Hands fn what the end of the log would: the unfinished last segment (and the empty segment of
 * a last line with no text), without consuming it: later bytes may still continue it. */
int logidx_scanner_tail(const struct logidx_scanner *s, logidx_seg_fn fn, void *ctx);

/* The log ends here: hands fn the unfinished last segment and closes the last line. */
int logidx_scanner_end(struct logidx_scanner *s, logidx_seg_fn fn, void *ctx);

uint64_t logidx_scanner_offset(const struct logidx_scanner *s); /* bytes fed */
/* Physical lines in the bytes fed, counting a last line without '\n'. */
uint64_t logidx_scanner_lines(const struct logidx_scanner *s);

/* Indexes n bytes that the caller read at `off` from the same file, when they are the next
 * bytes the index has not counted (else nothing happens): a reader that goes through the log
 * anyway (the incremental diagnosis) builds the line index on the way, with no second pass. */
void logidx_index_bytes(struct logidx *li, uint64_t off, const char *buf, size_t n);

/* Number of physical lines (counts the rest of the file the first time it is needed).
 * ERR_USAGE for a stream that was not scanned yet. */
int logidx_count_lines(struct logidx *li, uint64_t *lines, struct err *e);

/* Reads physical line `line` (1-based) into buf (NUL-terminated, without its '\n' and the '\r'
 * of a CRLF ending; '\r' inside the line is kept). *len receives the bytes stored, *clipped
 * whether the line was longer than bufsz - 1. *off (may be NULL) its byte offset.
 * ERR_DATA when the line does not exist, ERR_USAGE for a stream, ERR_IOERR on read errors. */
int logidx_read_line(struct logidx *li, uint64_t line, char *buf, size_t bufsz, size_t *len,
		     bool *clipped, uint64_t *off, struct err *e);

/* Re-reads the size of a regular file so that lines appended since open become visible.
 * Returns true when it grew. A file that shrank sets the truncated flag. */
bool logidx_refresh(struct logidx *li);

uint64_t logidx_size(const struct logidx *li);     /* bytes visible (stat'ed, or read for a stream) */
bool logidx_is_stream(const struct logidx *li);
bool logidx_truncated(const struct logidx *li);    /* the file shrank while we read it */
const char *logidx_name(const struct logidx *li);  /* the path given at open (owned by li) */

/* Index introspection for tests and the benchmark: checkpoints held and lines per checkpoint. */
size_t logidx_checkpoints(const struct logidx *li, uint64_t *stride);

#endif

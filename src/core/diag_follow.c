/* diag_follow.c — following a log that grows: only the bytes appended since the last call are
 * read. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oomfix/diag.h"
#include "oomfix/i18n.h"
#include "oomfix/json.h"
#include "oomfix/logidx.h"
#include "oomfix/save.h"
#include "oomfix/sig.h"
#include "oomfix/text.h"
#include "diag_int.h"

/* ---- following a growing log ----
 *
 * The scan state lives on between calls: the bytes appended since the last call are scanned and
 * the verdict is taken as if the log ended there, on a copy of the state that also receives the
 * unfinished last segment (a frame still being drawn), so the next bytes can continue it. */

struct diag_state {
	struct diag_job_info job;  /* a copy: job.name points at jobname */
	char *jobname;
	bool has_job;
	struct dstate *st;
	struct logidx_scanner *sc;
	struct diag_result scratch_out;
	/* the file followed by diag_state_follow */
	int fd;
	struct save_stamp file;    /* which file fd is (its device and inode) */
	char *buf;
	struct logidx *index;      /* also indexes what it reads into this log index, or NULL */
	char head[64];             /* the file's first bytes, to notice it was rewritten in place */
	size_t headlen;
};

/* True when the followed file no longer starts with the bytes read first: it was truncated and
 * written again (`> log.txt` of a new run) and has already grown past what was read. */
static bool head_changed(struct diag_state *ds)
{
	char now[sizeof ds->head];
	ssize_t r;

	if (ds->headlen == 0)
		return false;
	do
		r = pread(ds->fd, now, ds->headlen, 0);
	while (r < 0 && errno == EINTR);
	return r != (ssize_t)ds->headlen || memcmp(now, ds->head, ds->headlen) != 0;
}

#define FOLLOW_READ (64u * 1024)

static int state_start(struct diag_state *ds, struct err *e)
{
	ds->headlen = 0;
	dg_dstate_free(&ds->st);
	logidx_scanner_free(&ds->sc);
	ds->st = dg_dstate_new(ds->has_job ? &ds->job : NULL, &ds->scratch_out, NULL, e);
	if (!ds->st)
		return e && e->code ? e->code : ERR_SOFTWARE;
	if (logidx_scanner_new(LOGIDX_SEG_CAP, &ds->sc) != ERR_OK)
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, _("out of memory"));
	return ERR_OK;
}

int diag_state_new(const struct diag_job_info *job, struct diag_state **out, struct err *e)
{
	struct diag_state *ds = calloc(1, sizeof *ds);
	int rc;

	*out = NULL;
	if (!ds)
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, _("out of memory"));
	ds->fd = -1;
	if (job) {
		ds->job = *job;
		ds->has_job = true;
		if (job->name) {
			ds->jobname = strdup(job->name);
			if (!ds->jobname) {
				free(ds);
				return err_set(e, ERR_SOFTWARE, NULL, 0, 0, _("out of memory"));
			}
		}
		ds->job.name = ds->jobname;
	}
	rc = state_start(ds, e);
	if (rc) {
		diag_state_free(&ds);
		return rc;
	}
	*out = ds;
	return ERR_OK;
}

void diag_state_free(struct diag_state **pds)
{
	struct diag_state *ds;

	if (!pds || !*pds)
		return;
	ds = *pds;
	dg_dstate_free(&ds->st);
	logidx_scanner_free(&ds->sc);
	if (ds->fd >= 0)
		close(ds->fd);
	free(ds->buf);
	free(ds->jobname);
	free(ds);
	*pds = NULL;
}

int diag_state_reset(struct diag_state *ds, struct err *e)
{
	return state_start(ds, e);
}

int diag_state_feed(struct diag_state *ds, const char *buf, size_t len, struct err *e)
{
	int rc = logidx_scanner_feed(ds->sc, buf, len, dg_on_seg, ds->st);

	if (rc == ERR_DATA && dg_not_text(ds->st)) /* the sniff of the first 64 KiB said no */
		return dg_refuse_binary(ds->st, NULL, e);
	return rc;
}

uint64_t diag_state_offset(const struct diag_state *ds)
{
	return logidx_scanner_offset(ds->sc);
}

int diag_state_result(struct diag_state *ds, struct diag_result *out, struct err *e)
{
	struct dstate *c = malloc(sizeof *c);

	dg_result_init(out);
	if (!c)
		return err_set(e, ERR_SOFTWARE, NULL, 0, 0, _("out of memory"));
	*c = *ds->st; /* shares the matcher and the scratch buffer, which hold nothing between calls */
	c->out = out;
	logidx_scanner_tail(ds->sc, dg_on_seg, c);
	if (dg_not_text(c)) { /* a short log that is not text: refused as a whole file would be */
		int rc = dg_refuse_binary(c, NULL, e);
		free(c);
		return rc;
	}
	dg_verdict(c);
	dg_progress_now(c, out);
	out->lines = logidx_scanner_lines(ds->sc);
	out->bytes = logidx_scanner_offset(ds->sc);
	out->warnings = sig_warnings(ds->st->sm);
	free(c);
	return ERR_OK;
}

int diag_state_follow(struct diag_state *ds, const char *path, uint64_t max,
		      enum diag_follow *what, struct err *e)
{
	struct stat ps;
	bool restarted = false;
	uint64_t fed, got = 0;

	*what = DIAG_FOLLOW_SAME;
	if (stat(path, &ps) != 0) {
		/* moved aside (a restart) and not written again yet: keep what we have */
		if (errno == ENOENT && ds->fd >= 0)
			return ERR_OK;
		return err_set(e, ERR_NOINPUT, path, 0, 0, _("cannot open the log: %s"),
			       strerror(errno));
	}
	if (!S_ISREG(ps.st_mode))
		return err_set(e, ERR_NOINPUT, path, 0, 0,
			       _("only a regular file can be followed as it grows"));
	struct save_stamp now;
	save_stamp_of_stat(&ps, &now);
	if (ds->fd >= 0 && (!save_stamp_same_file(&now, &ds->file) ||
			    (uint64_t)ps.st_size < diag_state_offset(ds) || head_changed(ds))) {
		/* another file, or this one truncated: read it again from the start */
		close(ds->fd);
		ds->fd = -1;
		restarted = true;
		if (state_start(ds, e) != ERR_OK)
			return e && e->code ? e->code : ERR_SOFTWARE;
	}
	if (ds->fd < 0) {
		ds->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (ds->fd < 0 || save_stamp_fd(ds->fd, &ds->file) != 0) {
			int en = errno;
			if (ds->fd >= 0)
				close(ds->fd);
			ds->fd = -1;
			return err_set(e, ERR_NOINPUT, path, 0, 0, _("cannot open the log: %s"),
				       strerror(en));
		}
		ps.st_size = ds->file.size;
		if (diag_state_offset(ds) > 0) { /* reopened after a failure: start over */
			restarted = true;
			if (state_start(ds, e) != ERR_OK)
				return e && e->code ? e->code : ERR_SOFTWARE;
		}
	}
	if (!ds->buf && !(ds->buf = malloc(FOLLOW_READ)))
		return err_set(e, ERR_SOFTWARE, path, 0, 0, _("out of memory"));
	fed = diag_state_offset(ds);
	while (fed < (uint64_t)ps.st_size && (max == 0 || got < max)) {
		size_t want = FOLLOW_READ;
		ssize_t r;
		if (want > (uint64_t)ps.st_size - fed)
			want = (size_t)((uint64_t)ps.st_size - fed);
		if (max && want > max - got)
			want = (size_t)(max - got);
		r = pread(ds->fd, ds->buf, want, (off_t)fed);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return err_set(e, ERR_IOERR, path, 0, 0, _("read error: %s"), strerror(errno));
		if (r == 0)
			break; /* shrank under us: the next call starts over */
		diag_state_feed(ds, ds->buf, (size_t)r, e);
		if (fed < sizeof ds->head) { /* remember how the file starts */
			size_t k = sizeof ds->head - (size_t)fed;
			if (k > (size_t)r)
				k = (size_t)r;
			memcpy(ds->head + fed, ds->buf, k);
			ds->headlen = (size_t)fed + k;
		}
		if (ds->index)
			logidx_index_bytes(ds->index, fed, ds->buf, (size_t)r);
		fed += (uint64_t)r;
		got += (uint64_t)r;
	}
	*what = restarted ? DIAG_FOLLOW_RESTARTED : got ? DIAG_FOLLOW_GREW : DIAG_FOLLOW_SAME;
	return ERR_OK;
}

void diag_state_index_into(struct diag_state *ds, struct logidx *li)
{
	ds->index = li;
}

bool diag_state_pending(const struct diag_state *ds)
{
	struct stat fs;

	return ds->fd >= 0 && fstat(ds->fd, &fs) == 0 && (uint64_t)fs.st_size > diag_state_offset(ds);
}

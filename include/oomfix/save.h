/* save.h — saving that can never lose the user's file (SPEC §5). */
#ifndef OOMFIX_SAVE_H
#define OOMFIX_SAVE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <sys/types.h>

#include "oomfix/err.h"

struct stat;

/* Which file a path named, and how it looked, when it was stamped: the one notion of "is this
 * the same file" (a job changed on disk before saving, a log grown or replaced by a new run).
 * A stamp of a missing file is all zeros but exists = false. */
struct save_stamp {
	bool exists;
	dev_t dev;
	ino_t ino;
	off_t size;
	long long mtime_sec, mtime_nsec;
};

/* Takes the stamp of `path` (following symlinks). A missing file is not an error: the stamp
 * then says exists = false. Returns 0 or an ERR_ code (set in e); on an error too, the stamp
 * says exists = false. */
int save_stamp(const char *path, struct save_stamp *out, struct err *e);

/* The stamp of what stat/fstat returned in st (exists = true). */
void save_stamp_of_stat(const struct stat *st, struct save_stamp *out);

/* The stamp of the file open as fd (what was opened, even if its name now points elsewhere).
 * Returns 0, or -1 with errno set and *out left as it was. */
int save_stamp_fd(int fd, struct save_stamp *out);

/* True when a and b are the same file, unchanged: the same device and inode, size and
 * modification time (to the nanosecond); or both missing. A file rewritten in place (same
 * inode, new time), grown, or replaced by another (renamed over it) is not the same. */
bool save_stamp_same(const struct save_stamp *a, const struct save_stamp *b);

/* True when a and b are the same file, whatever was written to it since: both exist, with the
 * same device and inode. False when either is missing or the name now leads to another file
 * (moved aside and created again, or renamed over). */
bool save_stamp_same_file(const struct save_stamp *a, const struct save_stamp *b);

enum {
	SAVE_BACKUP = 1 << 0, /* keep the previous version as PATH~ */
	SAVE_FORCE = 1 << 1,  /* overwrite even when the file changed on disk */
};

/* Writes `len` bytes to `path` safely: temp file in the target's directory (symlinks followed,
 * the link kept), full write, fsync, mode and owner of the original, optional PATH~ backup,
 * re-stat and compare with `loaded` (NULL = do not check), rename, fsync of the directory.
 * The text is re-parsed as YAML first and refused if it does not parse (`check_yaml`).
 * On failure the original is intact, no temp file remains, and e says why
 * (ERR_TEMPFAIL when the file changed on disk; ERR_DATA when check_yaml refused the text, with
 * its line and column; ERR_CANTCREAT / ERR_IOERR otherwise). Returns 0 or that code.
 * A new file gets mode 0644 & ~umask. With SAVE_BACKUP, PATH~ (beside the symlink's target)
 * becomes the previous version, atomically. Side effect: SIGXFSZ is set to SIG_IGN if it is at
 * its default, so a file-size limit turns into an EFBIG error instead of killing the program. */
int save_file(const char *path, const char *text, size_t len, const struct save_stamp *loaded,
	      unsigned flags, bool check_yaml, struct err *e);

/* The same for an --output written from `job`: no stamp, no backup, the YAML checked; a new file
 * gets 0644 & ~umask narrowed to save_mode_for(job), so a private job's copy is private too. */
int save_output(const char *path, const char *text, size_t len, const char *job, struct err *e);

/* The permission bits for what oomfix keeps beside `job` (journal, retry logs, kept versions):
 * the job's read and write bits less the umask, the owner's own always (never execute or set-id
 * bits); 0600 when `job` is no regular file (a web UI job, whose row is in its database). */
mode_t save_mode_for(const char *job);

/* Writes a file oomfix keeps for itself (a web UI job's previous version, the version a retry
 * started from, a remembered command): through a fresh temporary file in the same folder (full
 * write, fsync) with exactly `mode` (read and write bits), renamed over `path`. Never through a
 * symbolic link: one planted under the name is replaced, the file it points at untouched. On
 * failure no temp file remains. Returns 0 or an ERR_ code (set in e). */
int save_private(const char *path, const char *text, size_t len, mode_t mode, struct err *e);

/* Emergency save for SIGHUP/SIGTERM: writes PATH.oomfix-save (mode 0600, not through a symlink;
 * a file already there that is not the user's alone — someone else's, a hard link, a FIFO — is
 * refused like a folder that refuses) with plain open/fstat/write/fsync/close only
 * (async-signal-safe; errno is preserved). When the job's folder refuses it (read-only, full, no
 * permission) and save_emergency_prepare(PATH) was called,
 * it goes to $XDG_STATE_HOME/oomfix/ (else ~/.local/state/oomfix/) as the job's absolute path
 * with '%' for '/' plus ".oomfix-save", the folders created, and one line on stderr says where
 * (or that it failed). Returns 0 or -1; on failure the partial file is removed. */
int save_emergency(const char *path, const char *text, size_t len);

/* Computes, outside a signal handler, the fallback name and the translated line save_emergency
 * needs for PATH (save_emergency_name calls it too). */
void save_emergency_prepare(const char *path);

/* The folder for what the job's own folder refuses: $XDG_STATE_HOME/oomfix (else
 * ~/.local/state/oomfix), created (mode 0700) when missing. Malloc'd; NULL when neither
 * variable gives an absolute path. */
char *save_state_dir(void);

/* The name of the emergency file for a job (malloc'd, the caller frees; NULL if out of memory):
 * PATH.oomfix-save, or the fallback in the state folder when only that one exists (to offer it
 * for recovery and remove it after a save). Prepares the fallback for save_emergency. */
char *save_emergency_name(const char *path);

/* The name of the change journal for a job, PATH.oomfix.md (malloc'd, the caller frees). */
char *save_journal_name(const char *path);

/* Appends one entry to the change journal PATH.oomfix.md (created with a title line if missing):
 * a heading with the local time (ISO 8601), "Fixes: a, b" (or "Manual edits" when nfixes is 0)
 * and one "- `path`: old → new" line per change, where each change is given as
 * "path: old → new" (the path is what precedes the first ": "). The entry is appended with a
 * single O_APPEND write. The journal is never opened through a symbolic link (one planted in its
 * place is refused: ERR_CANTCREAT, nothing written), nor a FIFO or a file with other names (a
 * hard link); a new one gets save_mode_for(PATH), one wider than that is narrowed to it (or
 * refused when it is not ours). The job's own save is not the journal's business: a caller
 * that saved says the save stands and the journal was not written. Returns 0 or an ERR_ code
 * (set in e, e->file naming the journal). */
int save_journal(const char *path, const char *const *fixes, size_t nfixes,
		 const char *const *changes, size_t nchanges, struct err *e);

/* The same with a line of context after "Fixes:" (`note`, may be NULL), e.g. which try of
 * `oomfix retry` the fixes answer and where its log is. */
int save_journal_note(const char *path, const char *note, const char *const *fixes,
		      size_t nfixes, const char *const *changes, size_t nchanges, struct err *e);

/* The same, with the name the journal's title line gives the job when it creates the journal
 * (`title` NULL: the base name of `path`), e.g. "aitk:NAME" for a web UI job. */
int save_journal_titled(const char *path, const char *title, const char *note,
			const char *const *fixes, size_t nfixes, const char *const *changes,
			size_t nchanges, struct err *e);

/* The same, naming the run the entry follows by its log's identity (run_log: the log file as it
 * is now, or NULL): a line "<!-- oomfix run log: DEV:INO -->", hidden where the journal is
 * rendered, that save_journal_entries reads back as log_dev and log_ino. */
int save_journal_run(const char *path, const char *title, const char *note, const char *run_log,
		     const char *const *fixes, size_t nfixes, const char *const *changes,
		     size_t nchanges, struct err *e);

/* When the newest entry of the change journal PATH.oomfix.md was written (seconds since the
 * epoch, from its "## 2026-12-02T21:47:12+00:00" heading). Returns false when there is no journal
 * or no entry in it. Only the journal's last 64 KiB are read. */
bool save_journal_last(const char *path, time_t *when);
/* The same, and the fix ids of that entry ("low_vram" or "batch_size, num_frames") into fixes
 * ("" for hand edits). */
bool save_journal_last_fixes(const char *path, time_t *when, char *fixes, size_t size);

/* One entry of the change journal as read back. */
struct save_journal_entry {
	time_t when;     /* its heading's time; 0 when the heading cannot be read */
	char **fixes;    /* the fix ids of its "Fixes:" line (none for manual edits) */
	size_t nfixes;
	char *note;      /* the context line (e.g. which try of a retry), or NULL */
	char **changes;  /* "path: old → new", as given to save_journal */
	size_t nchanges;
	/* The run it followed, by its log's identity at the time (E4): a web UI job's log.txt is
	 * renamed to logs/<n>_log.txt by the worker's next start, which keeps the file. */
	bool has_log_id;
	unsigned long long log_dev, log_ino;
};

/* Reads every entry of the change journal PATH.oomfix.md, oldest first (the order they were
 * written). *out is malloc'd (NULL and 0 when there is no journal); free with
 * save_journal_entries_free. Only the journal's last 1 MiB is read. Returns 0 or an ERR_ code
 * (only for a journal that exists but cannot be read, or out of memory). */
int save_journal_entries(const char *path, struct save_journal_entry **out, size_t *n,
			 struct err *e);
void save_journal_entries_free(struct save_journal_entry *v, size_t n);

#endif

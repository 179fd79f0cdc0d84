/* save.h — saving that can never lose the user's file (SPEC §5). */
#ifndef OOMFIX_SAVE_H
#define OOMFIX_SAVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "oomfix/err.h"

/* What the file looked like when it was loaded, to notice a change on disk before saving. */
struct save_stamp {
	bool exists;
	dev_t dev;
	ino_t ino;
	off_t size;
	long long mtime_sec, mtime_nsec;
};

/* Takes the stamp of `path` (following symlinks). */
int save_stamp(const char *path, struct save_stamp *out, struct err *e);

enum {
	SAVE_BACKUP = 1 << 0, /* keep the previous version as PATH~ */
	SAVE_FORCE = 1 << 1,  /* overwrite even when the file changed on disk */
};

/* Writes `len` bytes to `path` safely: temp file in the target's directory (symlinks followed,
 * the link kept), full write, fsync, mode and owner of the original, optional PATH~ backup,
 * re-stat and compare with `loaded` (NULL = do not check), rename, fsync of the directory.
 * The text is re-parsed as YAML first and refused if it does not parse (`check_yaml`).
 * On failure the original is intact, no temp file remains, and e says why
 * (ERR_TEMPFAIL when the file changed on disk; ERR_CANTCREAT / ERR_IOERR otherwise). */
int save_file(const char *path, const char *text, size_t len, const struct save_stamp *loaded,
	      unsigned flags, bool check_yaml, struct err *e);

/* Emergency save for SIGHUP/SIGTERM: writes PATH.oomfix-save with plain write(2)/fsync only
 * (async-signal-safe). Returns 0 or -1. */
int save_emergency(const char *path, const char *text, size_t len);

/* The name of the emergency file for a job (malloc'd). */
char *save_emergency_name(const char *path);

/* Appends one entry to the change journal PATH.oomfix.md: a heading with the local time,
 * the fixes applied (may be empty) and the lines "path: old → new". */
int save_journal(const char *path, const char *const *fixes, size_t nfixes,
		 const char *const *changes, size_t nchanges, struct err *e);

#endif

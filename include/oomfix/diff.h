/* diff.h — unified diff between two texts (Myers line diff, 3 lines of context). */
#ifndef OOMFIX_DIFF_H
#define OOMFIX_DIFF_H

#include <stddef.h>

/* Returns a malloc'd unified diff ("--- a\n+++ b\n@@ ... @@\n...") of old → new, or an empty
 * string when the texts are equal; the caller frees it. `label_old`/`label_new` name the files
 * in the headers. `context` lines surround each change (3 is diff -u's; negative means 0).
 * Lines are compared as bytes including their end, so a "\r\n" line keeps its "\r".
 * A text that does not end in a newline gets "\ No newline at end of file" as patch(1) expects.
 * Memory is linear in the two sizes. Returns NULL only when memory runs out. */
char *diff_unified(const char *label_old, const char *old, size_t oldlen, const char *label_new,
		   const char *new_, size_t newlen, int context);

/* Applies a unified diff (as diff_unified writes it) to `text`, hunk by hunk: a hunk applies
 * where its old lines (context and removed lines) are found, at or after where the previous one
 * applied; one that is not found is left out. Returns the malloc'd result (the caller frees;
 * *outlen its length) and counts the hunks in *applied and *failed; NULL when out of memory. */
char *diff_apply(const char *text, size_t len, const char *patch, size_t *outlen, size_t *applied,
		 size_t *failed);

#endif

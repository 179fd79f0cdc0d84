/* diff.h — unified diff between two texts (Myers line diff, 3 lines of context). */
#ifndef OOMFIX_DIFF_H
#define OOMFIX_DIFF_H

#include <stddef.h>

/* Returns a malloc'd unified diff ("--- a\n+++ b\n@@ ... @@\n...") of old → new, or an empty
 * string when the texts are equal. `label_old`/`label_new` name the files in the headers.
 * A text that does not end in a newline gets "\ No newline at end of file" as patch(1) expects.
 * Returns NULL only when memory runs out. */
char *diff_unified(const char *label_old, const char *old, size_t oldlen, const char *label_new,
		   const char *new_, size_t newlen, int context);

#endif

/* paths.h — where oomfix finds its data files (themes, catalogues, terminfo, a C.UTF-8 locale).
 *
 * A release archive or a `meson install --prefix DIR` is relocatable: the binary looks for
 * `share/` beside its own `bin/` through /proc/self/exe, so the tree can be unpacked or moved
 * anywhere. The compiled-in install paths and (in development builds) the build and source trees
 * are the fallbacks the callers add after it.
 */
#ifndef OOMFIX_PATHS_H
#define OOMFIX_PATHS_H

#include <stdbool.h>
#include <stddef.h>

/* The data directory beside the running binary: `<bin>/../share` when it holds `oomfix/`
 * (resolved, no symlinks), else NULL. Computed once; the string belongs to this module. */
const char *paths_share_dir(void);

/* Writes `<share>/<rel>` to out and returns true when paths_share_dir() is known and that path
 * exists; returns false (out unspecified) otherwise. */
bool paths_share_file(const char *rel, char *out, size_t outsz);

#endif

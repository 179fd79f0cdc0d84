/* i18n.h — gettext for every string a person reads: the two macros the whole program uses. The
 * program sets the locale and binds its catalogue once (src/cli/lang.h). */
#ifndef OOMFIX_I18N_H
#define OOMFIX_I18N_H

#include <libintl.h>

#define _(s) gettext(s)
#define N_(s) (s)

#endif

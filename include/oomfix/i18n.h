/* i18n.h — gettext for every string a person reads. */
#ifndef OOMFIX_I18N_H
#define OOMFIX_I18N_H

#include <libintl.h>

#define _(s) gettext(s)
#define N_(s) (s)

/* Binds the text domain: the installed locale dir, or the build tree's when running uninstalled.
 * Call once after setlocale(LC_ALL, ""). */
void i18n_init(void);

#endif

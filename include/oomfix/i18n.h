/* i18n.h — gettext for every string a person reads. */
#ifndef OOMFIX_I18N_H
#define OOMFIX_I18N_H

#include <libintl.h>

#define _(s) gettext(s)
#define N_(s) (s)

/* setlocale(LC_ALL, "") that keeps UTF-8 on a machine without the requested locale: falls back
 * to C.UTF-8 (the system's, or the copy a release carries) when a UTF-8 locale was asked for,
 * and lets the language it named pick the catalogue. Call first thing in main. */
void i18n_setlocale(void);

/* Binds the text domain: the catalogues beside the binary (a release or relocated install), the
 * build tree's when running uninstalled, else the installed locale dir. Call once after
 * i18n_setlocale(). */
void i18n_init(void);

#endif

/* lang.h — the program's locale and catalogue, set once by main (i18n.c). */
#ifndef OOMFIX_CLI_LANG_H
#define OOMFIX_CLI_LANG_H

#include <stdbool.h>

/* setlocale(LC_ALL, "") that keeps UTF-8 on a machine without the requested locale: falls back
 * to C.UTF-8 (the system's, or the copy a release carries) when a UTF-8 locale was asked for,
 * and lets the language it named pick the catalogue. Call first thing in main. */
void i18n_setlocale(void);

/* Binds the text domain: the catalogues beside the binary (a release or relocated install), the
 * build tree's when running uninstalled, else the installed locale dir. Call once after
 * i18n_setlocale(). */
void i18n_init(void);

/* Without a UTF-8 locale, makes stderr (and stdout when `with_stdout`) write oomfix's few
 * non-ASCII signs as ASCII: "->" for the arrow, "-" for the dash, "..." for the ellipsis. For the
 * subcommands, whose output a terminal without UTF-8 shows as it is; not for output that carries
 * the user's own text (a job written to stdout, JSON). */
void i18n_ascii_streams(bool with_stdout);

#endif

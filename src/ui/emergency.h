/* emergency.h — the emergency save on SIGHUP/SIGTERM (and a third Ctrl-C), the one die()
 * path, and the offer to recover an emergency save at start (emergency.c). */
#ifndef OOMFIX_UI_EMERGENCY_H
#define OOMFIX_UI_EMERGENCY_H

#include "app.h"

/* Installs the handlers (before curses starts, so it leaves SIGINT and SIGTERM to us). */
void ui_signals_install(void);
/* Keeps the handler's pointers to the current text up to date (a ui_session_on_change hook). */
void ui_emergency_track(const struct ui_session *s);
/* The terminal's modes before curses (tcgetattr on in_fd, the reset written to out_fd). */
void ui_emergency_tty(int in_fd, int out_fd);
/* Curses is up (with a terminal to put back: the handler resets it itself from now on) or
 * down again. */
void ui_emergency_curses(bool on, bool tty);
/* Nothing may point at the texts once they are freed (at exit). */
void ui_emergency_forget(void);
/* The Ctrl-Cs since the last call (the loop asks as q does). */
int ui_interrupts_take(void);

/* Ends the program with a message on stderr, the terminal put back first. */
void ui_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* Asks to recover an emergency save newer than the job, when there is one. */
void ui_offer_recovery(struct ui_app *a);
/* The user quits without saving: an emergency save recovered this session goes with the
 * changes it brought (E13). */
void ui_recovery_dropped(void);
/* Frees a recovered text not taken (at exit). */
void ui_recovery_free(void);

#endif
